import Foundation
import Haul
import HaulServer
import HaulTestSupport
import Testing
@testable import HaulService
import HaulCore

/// The service against the loopback server: downloads run, pause, resume and stop; the list
/// outlives the service; nothing leaves the download root.
/// Exclusive: paces real transfers (resources served at a fixed rate) and waits on them.
@Suite("Download service", .exclusive, .serialized, .timeLimit(.minutes(2)))
struct DownloadServiceTests {
    static let size: Int64 = 3 << 20

    @Test(arguments: TestStore.available) func aDownloadRunsToTheEndAndStaysAsAResult(store: TestStore) async throws {
        let server = try HaulServer()
        let resource = HaulServer.Resource(size: 300_000, seed: 3, etag: "\"r1\"")
        server.setResource("/done.bin", resource)
        try await withTemporaryDirectory { (dir) async throws in
            let service = try DownloadService(configuration: serviceConfiguration(dir, store: store))
            defer { service.shutDown() }
            let events = SharedStateLock<[ServiceEvent]>([])
            service.addObserver { event in events.withLock { $0.append(event) } }
            let id = try service.add(ServiceRequest(urls: [server.url("/done.bin")]))
            await eventually { service.download(id)?.status == .complete }
            let done = try #require(service.download(id))
            #expect(done.completedBytes == resource.size)
            #expect(done.totalBytes == resource.size)
            #expect(done.filePath == service.rootPath + "/done.bin")
            #expect(try Data(contentsOf: URL(fileURLWithPath: done.filePath!)) == Data(bytes(of: resource)))
            #expect(events.withLock { $0.map(\.kind) } == [.added, .started, .completed])
            #expect(service.stoppedDownloads { 0..<$0 }.map(\.id) == [id])
            #expect(service.statistics == ServiceStatistics(active: 0, waiting: 0, stopped: 1, stoppedTotal: 1, bytesPerSecond: 0))
            try service.forgetResult(id)
            #expect(service.download(id) == nil)
        }
    }

    @Test(arguments: TestStore.available) func anIdleServiceKeepsNoConnectionOpen(store: TestStore) async throws {
        // Given a service that downloaded one file over a keep-alive connection
        let server = try HaulServer()
        server.setResource("/idle.bin", HaulServer.Resource(size: 100_000, seed: 9, etag: "\"i1\""))
        try await withTemporaryDirectory { (dir) async throws in
            let service = try DownloadService(configuration: serviceConfiguration(dir, connections: 1, store: store))
            defer { service.shutDown() }
            let id = try service.add(ServiceRequest(urls: [server.url("/idle.bin")]))
            await eventually { service.download(id)?.status == .complete }
            // Then, with nothing left to run, the connection is closed rather than parked (the
            // pool would close an expired one only at the next request, which may never come)
            await eventually(timeout: .seconds(3)) { server.openConnectionCount == 0 }
        }
    }

    @Test(arguments: TestStore.available) func aPauseIsInPlaceBeforeItReturnsAndAResumeContinuesThePartialFile(store: TestStore) async throws {
        let server = try HaulServer()
        let resource = HaulServer.Resource(size: Self.size, seed: 4, etag: "\"p1\"", rate: 1_000_000)
        server.setResource("/paused.bin", resource)
        try await withTemporaryDirectory { (dir) async throws in
            let service = try DownloadService(configuration: serviceConfiguration(dir, connections: 1, store: store))
            defer { service.shutDown() }
            let id = try service.add(ServiceRequest(urls: [server.url("/paused.bin")]))
            await eventually { (service.download(id)?.completedBytes ?? 0) > 300_000 }
            try service.pause(id)
            #expect(service.download(id)?.status == .paused, "paused before pause() returned")
            #expect(throws: ServiceError.self) { try service.pause(id) }
            try await Task.sleep(for: .milliseconds(200))
            let root = URL(fileURLWithPath: service.rootPath)
            #expect(listFiles(root) == ["paused.bin.part", "paused.bin.resume"])
            // The same file, served faster for the rest (paced still: the bytes sent are the bytes read).
            server.setResource("/paused.bin", HaulServer.Resource(size: Self.size, seed: 4, etag: "\"p1\"", rate: 8_000_000))
            try service.resume(id)
            await eventually { service.download(id)?.status == .complete }
            #expect(try Data(contentsOf: root.appendingPathComponent("paused.bin")) == Data(bytes(of: resource)))
            #expect(server.bodyBytesSent < Self.size * 12 / 10, "the resume fetched the file again")
        }
    }

    @Test(arguments: TestStore.available) func theListOutlivesTheService(store: TestStore) async throws {
        let server = try HaulServer()
        let slow = HaulServer.Resource(size: Self.size, seed: 5, etag: "\"s1\"", rate: 1_000_000)
        server.setResource("/slow.bin", slow)
        server.setResource("/small.bin", HaulServer.Resource(size: 1000, seed: 6, etag: "\"m1\""))
        try await withTemporaryDirectory { (dir) async throws in
            var ids: [DownloadID] = []
            do {
                let service = try DownloadService(configuration: serviceConfiguration(dir, active: 1, connections: 1, store: store))
                let done = try service.add(ServiceRequest(urls: [server.url("/small.bin")]))
                await eventually { service.download(done)?.status == .complete }
                let active = try service.add(ServiceRequest(urls: [server.url("/slow.bin")]))
                let waiting = try service.add(ServiceRequest(urls: [server.url("/small.bin?w")], options: named("w.bin")))
                let paused = try service.add(ServiceRequest(urls: [server.url("/small.bin?p")], options: named("p.bin"), paused: true))
                ids = [done, active, waiting, paused]
                await eventually { (service.download(active)?.completedBytes ?? 0) > 500_000 }
                service.shutDown()
                #expect(throws: ServiceError.self) { try service.pause(active) }
            }
            server.setResource("/slow.bin", HaulServer.Resource(size: Self.size, seed: 5, etag: "\"s1\"", rate: 4_000_000))
            let service = try DownloadService(configuration: serviceConfiguration(dir, active: 1, connections: 1, store: store))
            defer { service.shutDown() }
            #expect(service.download(ids[0])?.status == .complete)
            #expect(service.download(ids[1])?.status == .active, "the active download continues")
            #expect(service.download(ids[2])?.status == .waiting)
            #expect(service.download(ids[3])?.status == .paused)
            await eventually { service.download(ids[2])?.status == .complete }
            #expect(service.download(ids[3])?.status == .paused, "a paused download stays paused")
            let root = URL(fileURLWithPath: service.rootPath)
            #expect(try Data(contentsOf: root.appendingPathComponent("slow.bin")) == Data(bytes(of: slow)))
            #expect(server.bodyBytesSent < Self.size * 12 / 10 + 10_000, "the restart fetched the file again")
        }
    }

    @Test(arguments: TestStore.available) func foldersAndNamesNeverLeaveTheRoot(store: TestStore) async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { (dir) async throws in
            let service = try DownloadService(configuration: serviceConfiguration(dir, store: store))
            defer { service.shutDown() }
            let root = URL(fileURLWithPath: service.rootPath)
            let outside = dir.appendingPathComponent("outside")
            try FileManager.default.createDirectory(at: outside, withIntermediateDirectories: true)
            try FileManager.default.createSymbolicLink(at: root.appendingPathComponent("link"), withDestinationURL: outside)
            var refused: [ServiceDownloadOptions] = []
            for folder in ["..", "../outside", "a/../../outside", outside.path, "/etc", "link", "link/deeper", "./a"] {
                var options = ServiceDownloadOptions()
                options.directory = folder
                refused.append(options)
            }
            for name in ["..", ".", "../x.bin", "a/b.bin", "/etc/passwd", ""] { refused.append(named(name)) }
            for options in refused {
                #expect(throws: ServiceError.self, "\(options.directory) \(options.fileName ?? "")") {
                    try service.add(ServiceRequest(urls: [server.url("/bytes/10")], options: options))
                }
            }
            #expect(listFiles(outside).isEmpty)
            #expect(service.statistics.waiting + service.statistics.active == 0)
            var inside = ServiceDownloadOptions()
            inside.directory = root.path + "/sub"
            let id = try service.add(ServiceRequest(urls: [server.url("/bytes/10")], options: inside))
            #expect(service.download(id)?.options.directory == "sub")
            await eventually { service.download(id)?.status == .complete }
            #expect(listFiles(root.appendingPathComponent("sub")) == ["10"])
        }
    }

    @Test(arguments: TestStore.available) func aLinkThatAppearsLaterFailsTheDownloadWithoutWritingThrough(store: TestStore) async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { (dir) async throws in
            let service = try DownloadService(configuration: serviceConfiguration(dir, store: store))
            defer { service.shutDown() }
            var options = ServiceDownloadOptions()
            options.directory = "later"
            let id = try service.add(ServiceRequest(urls: [server.url("/bytes/10")], options: options, paused: true))
            let outside = dir.appendingPathComponent("outside")
            try FileManager.default.createDirectory(at: outside, withIntermediateDirectories: true)
            try FileManager.default.createSymbolicLink(at: URL(fileURLWithPath: service.rootPath + "/later"),
                                                       withDestinationURL: outside)
            try service.resume(id)
            await eventually { service.download(id)?.status == .error }
            #expect(service.download(id)?.failure?.code == "unsafePath")
            #expect(listFiles(outside).isEmpty)
        }
    }

    @Test(arguments: TestStore.available) func badRequestsAreRefused(store: TestStore) async throws {
        try await withTemporaryDirectory { (dir) async throws in
            let service = try DownloadService(configuration: serviceConfiguration(dir, store: store))
            defer { service.shutDown() }
            #expect(throws: ServiceError.self) { try service.add(ServiceRequest(urls: [])) }
            #expect(throws: ServiceError.self) { try service.add(ServiceRequest(urls: ["ftp://127.0.0.1/x"])) }
            #expect(throws: ServiceError.self) { try service.add(ServiceRequest(urls: ["not a url"])) }
            var options = ServiceDownloadOptions()
            options.headers = [.init(name: "Bad Name", value: "x")]
            #expect(throws: ServiceError.self) { try service.add(ServiceRequest(urls: ["http://127.0.0.1:1/x"], options: options)) }
            let id = try service.add(ServiceRequest(urls: ["http://127.0.0.1:1/x"], paused: true))
            #expect(throws: ServiceError.self) { try service.add(ServiceRequest(urls: ["http://127.0.0.1:1/y"], id: id)) }
            #expect(service.identifiers(withPrefix: String(id.hex.prefix(6))) == [id])
        }
    }

    @Test(arguments: TestStore.available) func aDownloadsSnapshotsFollowItToItsResult(store: TestStore) async throws {
        let server = try HaulServer()
        let resource = HaulServer.Resource(size: 300_000, seed: 8, etag: "\"d1\"")
        server.setResource("/followed.bin", resource)
        try await withTemporaryDirectory { (dir) async throws in
            // Given a download added paused, and a stream of its snapshots
            let service = try DownloadService(configuration: serviceConfiguration(dir, store: store))
            defer { service.shutDown() }
            let id = try service.add(ServiceRequest(urls: [server.url("/followed.bin")], paused: true))
            let snapshots = service.snapshots(of: id)
            // When it is resumed and runs to the end
            try service.resume(id)
            var seen: [ServiceDownload] = []
            for await snapshot in snapshots { seen.append(snapshot) }
            // Then the stream began with the paused download and ended with its result
            #expect(seen.first?.status == .paused)
            #expect(seen.last?.status == .complete)
            #expect(seen.last?.completedBytes == resource.size)
            #expect(seen.last?.filePath == service.rootPath + "/followed.bin")
            // And a download there is not has an empty stream
            var unknown = 0
            for await _ in service.snapshots(of: DownloadID(rawValue: 0x99)!) { unknown += 1 }
            #expect(unknown == 0)
        }
    }

    private func named(_ name: String) -> ServiceDownloadOptions {
        var options = ServiceDownloadOptions()
        options.fileName = name
        return options
    }
}
