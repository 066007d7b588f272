import Foundation
import Haul
import HaulCore
import HaulServer
import HaulTestSupport
import Testing
@testable import HaulService

/// What a change's effects come to, decided under the service's lock: the engine's starts and
/// stops in the order decided, the rows and the events, with no service, file or socket.
@Suite struct ServicePlanTests {
    /// The identifier `value`.
    static func id(_ value: UInt64) -> DownloadID { DownloadID(rawValue: value)! }

    /// A waiting entry with identifier `value`.
    static func entry(_ value: UInt64) -> ServiceQueue.Entry {
        ServiceQueue.Entry(id: id(value), urls: ["http://127.0.0.1:1/\(value)"], options: .init(), status: .waiting, position: 0)
    }

    /// The engine's work of a plan, as text.
    static func runs(_ plan: DownloadService.Plan) -> [String] {
        plan.work.runs.map { action in
            switch action {
            case .start(let id, let generation, let entry): "start \(id.hex) \(generation) \(entry.status)"
            case .stop(let id, let generation): "stop \(id.hex) \(generation)"
            }
        }
    }

    @Test func aStartCarriesTheEntryAsDecidedAndAStopDecidedBeforeTheRunBeganFollowsIt() throws {
        // Given a queue with one slot
        var queue = ServiceQueue(maximumActive: 1)
        let one = Self.id(1)
        // When a download is added, paused and resumed before the engine was told anything
        let added = DownloadService.plan(queue.add(Self.entry(1), at: nil), entries: queue.entries)
        let paused = DownloadService.plan(try queue.pause(one), entries: queue.entries)
        let resumed = DownloadService.plan(try queue.unpause(one), entries: queue.entries)
        let ended = DownloadService.plan(queue.runEnded(one, generation: 1, outcome: .cancelled, ranges: nil),
                                         entries: queue.entries)
        // Then the engine is told to start run 1 (with the entry it had), stop it, and start run 2
        // only once run 1 ended: never two runs at once
        #expect(Self.runs(added) == ["start \(one.hex) 1 active"])
        #expect(Self.runs(paused) == ["stop \(one.hex) 1"])
        #expect(Self.runs(resumed) == [])
        #expect(Self.runs(ended) == ["start \(one.hex) 2 active"])
        // And each change's rows and events are in the plan, in the order decided
        #expect(added.changes.map(Self.rowID) == [one, one])
        #expect(added.events.map(\.kind) == [.added, .started])
        #expect(paused.events.map(\.kind) == [.paused])
        #expect(resumed.events.map(\.kind) == [.unpaused, .started])
        #expect(added.work.changed.contains(one))
    }

    @Test func aStartOrARowOfADownloadNoLongerInMemoryIsDropped() {
        let gone = Self.id(7)
        let plan = DownloadService.plan([.start(gone, generation: 3), .save(gone), .saveStatus(gone), .delete(gone)], entries: [:])
        #expect(plan.work.runs.isEmpty)
        #expect(plan.changes == [.delete(gone)])
    }

    /// The download a row change is about.
    static func rowID(_ change: StoreChange) -> DownloadID {
        switch change {
        case .save(let row): row.id
        case .delete(let id), .status(let id, _): id
        }
    }
}

/// The service decides under its lock and acts after it: a run's file system checks that wait
/// (a slow mount) hold up no query and no other change, and the held run then goes on as
/// decided.
/// Serialized: holds a run's start on a gate for up to 20 s.
@Suite("File system work outside the lock", .throttled, .serialized, .timeLimit(.minutes(1)))
struct ServiceLockTests {
    /// The held download's identifier.
    static let held = DownloadID(rawValue: 0x36)!

    /// Adds the download named `held.bin` on a thread of its own (its run's check of the name
    /// is what the gate holds); returns once the check is held, with whether it is and whether
    /// the add was answered by then.
    static func addHeld(_ service: DownloadService, _ server: HaulServer,
                        _ fileSystem: GatedFileSystem) -> (held: Bool, answered: Bool) {
        var options = ServiceDownloadOptions()
        options.fileName = "held.bin"
        let request = ServiceRequest(urls: [server.url("/held.bin")], options: options, id: held)
        let added = ConditionLock(false)
        Thread {
            _ = try? service.add(request)
            added.withLockBroadcasting { $0 = true }
        }.start()
        let isHeld = fileSystem.waitUntilHeld()
        added.wait(until: .now + .seconds(10)) { !$0 }
        return (isHeld, added.withLock { $0 } && fileSystem.gate.withLock { $0.released == 0 })
    }

    @Test func queriesAreAnsweredWhileARunsFileCheckIsHeldAndTheRunThenCompletes() async throws {
        let server = try HaulServer()
        let resource = HaulServer.Resource(size: 300_000, seed: 36, etag: "\"h1\"")
        server.setResource("/held.bin", resource)
        server.setResource("/other.bin", HaulServer.Resource(size: 1_000, seed: 37, etag: "\"o1\""))
        try await withTemporaryDirectory { (dir) async throws in
            // Given a service whose run's look at the file it is to write is held on a gate
            let fileSystem = GatedFileSystem(holding: "held.bin")
            let service = try DownloadService(configuration: serviceConfiguration(dir), fileSystem: fileSystem)
            defer { service.shutDown() }
            let (held, added) = Self.addHeld(service, server, fileSystem)
            #expect(held, "the run's file check started")
            #expect(added, "the add waited for its run's file check")
            // When other callers ask for the list and change it meanwhile
            let answered = ConditionLock<ServiceStatistics?>(nil)
            Thread {
                let held = service.download(Self.held)
                _ = service.activeDownloads()
                _ = service.waitingDownloads { 0..<$0 }
                _ = service.stoppedDownloads { 0..<$0 }
                _ = try? service.add(ServiceRequest(urls: [server.url("/other.bin")], paused: true))
                let statistics = service.statistics
                answered.withLockBroadcasting { $0 = held?.status == .active ? statistics : nil }
            }.start()
            answered.wait(until: .now + .seconds(10)) { $0 == nil }
            // Then they are answered while the check is held, and see the download active
            let statistics = answered.withLock { $0 }
            #expect(statistics?.active == 1, "a query waited for a run's file system check")
            #expect(statistics?.waiting == 1)
            // And once the gate opens, the held run goes on and lands the whole file
            fileSystem.open()
            await eventually { service.download(Self.held)?.status == .complete }
            let done = try #require(service.download(Self.held))
            #expect(done.filePath == service.rootPath + "/held.bin")
            #expect(try Data(contentsOf: URL(fileURLWithPath: service.rootPath + "/held.bin")) == Data(bytes(of: resource)))
        }
    }

    @Test func withoutItsOwnThreadTheServiceCarriesOutItsWorkOnTheCaller() async throws {
        let server = try HaulServer()
        let resource = HaulServer.Resource(size: 100_000, seed: 39, etag: "\"n1\"")
        server.setResource("/unthreaded.bin", resource)
        try await withTemporaryDirectory { (dir) async throws in
            // Given a service whose own thread never starts
            let attempts = SharedStateLock(0)
            let service = try DownloadService(configuration: serviceConfiguration(dir), fileSystem: SystemFileSystem(),
                                              threadStarter: { _, _ in attempts.withLock { $0 += 1 }; return EAGAIN })
            defer { service.shutDown() }
            // When a download is added
            let id = try service.add(ServiceRequest(urls: [server.url("/unthreaded.bin")]))
            // Then its run started on the caller, and it lands
            #expect(attempts.withLock { $0 } > 0, "the service asked for its thread")
            await eventually { service.download(id)?.status == .complete }
            #expect(try Data(contentsOf: URL(fileURLWithPath: service.rootPath + "/unthreaded.bin")) == Data(bytes(of: resource)))
        }
    }

    @Test func aRemoveWhileARunsFileCheckIsHeldStopsTheRunItMakes() async throws {
        let server = try HaulServer()
        server.setResource("/held.bin", HaulServer.Resource(size: 300_000, seed: 38, etag: "\"h2\""))
        try await withTemporaryDirectory { (dir) async throws in
            // Given a download whose run's file check is held
            let fileSystem = GatedFileSystem(holding: "held.bin")
            let service = try DownloadService(configuration: serviceConfiguration(dir), fileSystem: fileSystem)
            defer { service.shutDown() }
            let events = SharedStateLock<[ServiceEvent.Kind]>([])
            service.addObserver { event in events.withLock { $0.append(event.kind) } }
            #expect(Self.addHeld(service, server, fileSystem).held)
            // When it is removed meanwhile (the remove returns at once)
            try service.remove(Self.held)
            #expect(fileSystem.gate.withLock { $0.released } == 0, "the remove waited for the held check")
            #expect(service.download(Self.held)?.status == .removed)
            // Then, once the gate opens, the run the check began is stopped: the download stays
            // removed, no run is left, and nothing is reported after the removal
            fileSystem.open()
            await eventually { service.state.withLock { $0.runs.isEmpty && !$0.work.isDraining } }
            #expect(service.download(Self.held)?.status == .removed)
            #expect(events.withLock { $0 } == [.added, .started, .removed])
        }
    }
}

/// A file system whose look at one file name waits on a gate, as a slow mount would.
final class GatedFileSystem: ServiceFileSystem {
    let heldName: String
    let gate = ConditionLock((held: 0, released: 0, open: false))

    /// A file system that holds the look at a file named `name`.
    init(holding name: String) { heldName = name }

    /// The system's walk of the folder, never held.
    func checkExisting(_ folder: ContainedPath, belowRoot rootPath: String) throws(ContainedPath.Refusal) {
        try SystemFileSystem().checkExisting(folder, belowRoot: rootPath)
    }

    /// The system's `lstat`, held on the gate first when `path` names the held file.
    func entryExists(atPath path: String) -> Bool {
        if path.hasSuffix("/" + heldName) {
            gate.withLockBroadcasting { $0.held += 1 }
            gate.wait(until: .now + .seconds(20)) { !$0.open }
            gate.withLock { $0.released += 1 }
        }
        return SystemFileSystem().entryExists(atPath: path)
    }

    /// Waits up to 10 s for a look to be held; whether one is.
    func waitUntilHeld() -> Bool {
        gate.wait(until: .now + .seconds(10)) { $0.held == 0 }
        return gate.withLock { $0.held > 0 }
    }

    /// Lets every look through, now and later.
    func open() { gate.withLockBroadcasting { $0.open = true } }
}
