import Foundation
import HaulServer
import HaulTestSupport
import Synchronization
import Testing
@testable import Haul
@testable import HaulService

/// Nodes of a fleet on one PostgreSQL queue: downloads added through any node are each run by
/// one node and complete once, byte-identical, the row naming the node and its file; a node
/// that dies leaves its downloads to the others when its lease ends.
/// Exclusive: paces transfers (`rate=`) so that a node dies with downloads in flight.
@Suite(.exclusive, .serialized, .enabled(if: PostgresCluster.isAvailable, "PostgreSQL is not installed"), .timeLimit(.minutes(2)))
struct FleetNodeTests {
    static func node(_ name: String, _ database: PostgresSettings, _ dir: URL, active: Int, lease: Duration = .seconds(10),
                     folder: String? = nil) throws -> FleetNode {
        var configuration = FleetNode.Configuration(
            node: name, database: database,
            service: serviceConfiguration(dir.appendingPathComponent(folder ?? name), active: active, connections: 1))
        configuration.lease = lease
        return try FleetNode(configuration: configuration)
    }

    /// `gid -> (status, node, file)` of every row.
    static func rows(_ database: PostgresSettings) throws -> [String: (status: String, node: String?, file: String?, fence: Int64)] {
        let connection = try PostgresConnection(database)
        defer { connection.close() }
        var found: [String: (status: String, node: String?, file: String?, fence: Int64)] = [:]
        for values in try connection.run("SELECT gid, status, node, file, fence FROM haul_downloads").values {
            found[values[0] ?? ""] = (values[1] ?? "", values[2], values[3], Int64(values[4] ?? "") ?? -1)
        }
        return found
    }

    @Test func downloadsAddedThroughAnyNodeCompleteOnceEachOnOneNode() async throws {
        let server = try HaulServer()
        let database = try PostgresSettings(try #require(PostgresCluster.shared).makeDatabase())
        try await withTemporaryDirectory { (dir) async throws in
            let nodes = try ["a", "b", "c"].map { try Self.node($0, database, dir, active: 2) }
            defer { nodes.forEach { $0.stop() } }
            var ids: [DownloadID] = []
            for index in 0..<30 {
                let url = server.url("/bytes/\(50_000 + index)/f\(index).bin?rate=2000000")
                ids.append(try nodes[index % 3].add(ServiceRequest(urls: [url])))
            }
            await eventually(timeout: .seconds(60)) { (try? Self.rows(database).values.allSatisfy { $0.status == "complete" }) == true }
            let rows = try Self.rows(database)
            #expect(Set(rows.keys) == Set(ids.map { String(Int64(bitPattern: $0.rawValue)) }))
            for (_, row) in rows {
                let node = try #require(row.node)
                let file = try #require(row.file)
                #expect(file.hasPrefix(dir.appendingPathComponent(node).path + "/"), "\(file) is not below node \(node)'s root")
                let name = URL(fileURLWithPath: file).lastPathComponent
                let size = Int(name.dropFirst().prefix { $0.isNumber }).map { 50_000 + $0 }
                #expect(try Data(contentsOf: URL(fileURLWithPath: file)).count == size)
                #expect(row.fence == 1, "claimed once")
            }
            let fetches = Dictionary(grouping: server.requests.filter { $0.path.hasPrefix("/bytes/") }, by: \.path)
            #expect(fetches.count == 30 && fetches.values.allSatisfy { $0.count == 1 }, "each file was fetched once")
            #expect(Set(rows.values.compactMap(\.node)).count > 1, "the work was shared")
        }
    }

    @Test func aNodeThatDiesLeavesItsDownloadsToAnotherWithinTheLease() async throws {
        let server = try HaulServer()
        let database = try PostgresSettings(try #require(PostgresCluster.shared).makeDatabase())
        try await withTemporaryDirectory { (dir) async throws in
            let dying = try Self.node("dying", database, dir, active: 2, lease: .seconds(1))
            let ids = try dying.add([ServiceRequest(urls: [server.url("/bytes/400000/a.bin?rate=400000")]),
                                     ServiceRequest(urls: [server.url("/bytes/400000/b.bin?rate=400000")])])
            await eventually { dying.claims.count == 2 && dying.service.activeDownloads().count == 2 }
            let heir = try Self.node("heir", database, dir, active: 2, lease: .seconds(1))
            defer { heir.stop() }
            #expect(heir.claims.isEmpty, "a lease that holds is not taken")
            let diedAt = ContinuousClock.now
            dying.abandon()
            await eventually { heir.claims.count == 2 }
            #expect(ContinuousClock.now - diedAt < .seconds(6), "taken over within the lease and 5 s")
            await eventually(timeout: .seconds(30)) { (try? Self.rows(database).values.allSatisfy { $0.status == "complete" }) == true }
            let rows = try Self.rows(database)
            for id in ids {
                let row = try #require(rows[String(Int64(bitPattern: id.rawValue))])
                #expect(row.node == "heir" && row.fence == 2)
                #expect(try Data(contentsOf: URL(fileURLWithPath: try #require(row.file))).count == 400_000)
            }
        }
    }

    @Test func aNodeRestartedUnderItsNameTakesItsDownloadsBackWithoutWaitingForTheLease() async throws {
        let server = try HaulServer()
        let database = try PostgresSettings(try #require(PostgresCluster.shared).makeDatabase())
        try await withTemporaryDirectory { (dir) async throws in
            let first = try Self.node("same", database, dir, active: 1, lease: .seconds(60))
            let id = try first.add(ServiceRequest(urls: [server.url("/bytes/300000/again.bin?rate=300000")]))
            await eventually { first.service.activeDownloads().count == 1 }
            first.abandon()   // as a kill leaves it: claimed by "same" for another minute
            let restarted = try Self.node("same", database, dir, active: 1, lease: .seconds(60))
            defer { restarted.stop() }
            await eventually(timeout: .seconds(10)) { restarted.claims.map(\.id) == [id] }
            #expect(restarted.claims.first?.fence == 2, "taken with a new fencing number")
            await eventually { (try? Self.rows(database)[String(Int64(bitPattern: id.rawValue))])?.status == "complete" }
        }
    }

    @Test func aDownloadTakenOverInASharedFolderResumesFromThePartialFile() async throws {
        let server = try HaulServer()
        let database = try PostgresSettings(try #require(PostgresCluster.shared).makeDatabase())
        try await withTemporaryDirectory { (dir) async throws in
            let dying = try Self.node("dying", database, dir, active: 1, lease: .seconds(1), folder: "shared")
            let id = try dying.add(ServiceRequest(urls: [server.url("/bytes/1000000/half.bin?rate=500000")]))
            await eventually { (dying.service.download(id)?.completedBytes ?? 0) >= 400_000 }
            dying.abandon()   // stops its transfer (its record synced) and leaves its claim to expire
            let heir = try Self.node("heir", database, dir, active: 1, lease: .seconds(1), folder: "shared")
            defer { heir.stop() }
            await eventually(timeout: .seconds(30)) { (try? Self.rows(database)[String(Int64(bitPattern: id.rawValue))])?.status == "complete" }
            #expect(try Data(contentsOf: dir.appendingPathComponent("shared/downloads/half.bin")) == Data(bytes(of: .init(size: 1_000_000))))
            #expect(server.bodyBytesSent < 1_700_000, "the heir fetched \(server.bodyBytesSent) bytes in all: it started over")
            #expect(server.requests.last?.header("Range")?.hasPrefix("bytes=") == true, "the heir asked for the rest")
        }
    }

    @Test func aStoppedNodeGivesItsClaimsBackAsWaiting() async throws {
        let server = try HaulServer()
        let database = try PostgresSettings(try #require(PostgresCluster.shared).makeDatabase())
        try await withTemporaryDirectory { (dir) async throws in
            let node = try Self.node("n", database, dir, active: 1)
            let id = try node.add(ServiceRequest(urls: [server.url("/bytes/2000000/slow.bin?rate=100000")]))
            await eventually { node.service.activeDownloads().count == 1 }
            node.stop()
            let row = try #require(try Self.rows(database)[String(Int64(bitPattern: id.rawValue))])
            #expect(row.status == "waiting" && row.node == nil)
        }
    }
}

extension FleetNode {
    /// The download as the fleet's list has it; `nil` when it has none or cannot be read.
    func look(_ id: DownloadID) -> ServiceDownload? {
        (try? download(id)) ?? nil
    }
}

/// Changes asked through one node of a download another node runs, and PostgreSQL going away.
/// Exclusive: paces transfers (`rate=`) so that downloads are in flight when asked to change.
@Suite(.exclusive, .serialized, .enabled(if: PostgresCluster.isAvailable, "PostgreSQL is not installed"), .timeLimit(.minutes(2)))
struct FleetChangeTests {
    @Test func aPauseOrRemovalAskedThroughAnotherNodeIsDoneByTheNodeThatRunsIt() async throws {
        let server = try HaulServer()
        let database = try PostgresSettings(try #require(PostgresCluster.shared).makeDatabase())
        try await withTemporaryDirectory { (dir) async throws in
            let runner = try FleetNodeTests.node("runner", database, dir, active: 2, lease: .seconds(3))
            defer { runner.stop() }
            let ids = try runner.add([ServiceRequest(urls: [server.url("/bytes/4000000/p.bin?rate=200000")]),
                                      ServiceRequest(urls: [server.url("/bytes/4000000/r.bin?rate=200000")])])
            await eventually { runner.service.activeDownloads().count == 2 && runner.service.activeDownloads().allSatisfy { $0.completedBytes > 0 } }
            let asker = try FleetNodeTests.node("asker", database, dir, active: 1)
            defer { asker.stop() }
            let heard = Mutex<[ServiceEvent]>([])
            asker.addObserver { event in heard.withLock { $0.append(event) } }
            #expect(asker.look(ids[0])?.node == "runner")
            // Its progress reaches the other nodes with each renewal.
            await eventually { (asker.look(ids[0])?.completedBytes ?? 0) > 0 && (asker.look(ids[0])?.bytesPerSecond ?? 0) > 0 }
            let askedAt = ContinuousClock.now
            _ = try asker.enqueuePause(ids[0])
            _ = try asker.enqueueRemove(ids[1])
            await eventually { asker.look(ids[0])?.status == .paused && asker.look(ids[1])?.status == .removed }
            #expect(ContinuousClock.now - askedAt < .seconds(1), "done within a second")
            #expect(runner.service.activeDownloads().isEmpty)
            await eventually {
                let events = heard.withLock { $0 }
                return events.contains(ServiceEvent(id: ids[0], kind: .paused)) && events.contains(ServiceEvent(id: ids[1], kind: .removed))
            }
            #expect(asker.look(ids[0])?.completedBytes ?? 0 > 0, "the pause kept the bytes so far")
            _ = try asker.enqueueResume(ids[0])
            // Back in the queue: claimed again by one of the two nodes (each has a slot).
            await eventually { [.active, .complete].contains(asker.look(ids[0])?.status) && asker.look(ids[0])?.node != nil }
        }
    }

    @Test func newURLsForADownloadAnotherNodeRunsRestartItsTransferThere() async throws {
        let server = try HaulServer()
        let database = try PostgresSettings(try #require(PostgresCluster.shared).makeDatabase())
        try await withTemporaryDirectory { (dir) async throws in
            let runner = try FleetNodeTests.node("runner", database, dir, active: 1)
            defer { runner.stop() }
            let id = try runner.add(ServiceRequest(urls: [server.url("/bytes/4000000/c.bin?rate=100000")]))   // 40 s
            await eventually { runner.service.activeDownloads().count == 1 }
            let asker = try FleetNodeTests.node("asker", database, dir, active: 1)
            defer { asker.stop() }
            _ = try asker.enqueueChangeURLs(id, to: [server.url("/bytes/4000000/c.bin")])
            await eventually(timeout: .seconds(15)) { asker.look(id)?.status == .complete }
            #expect(asker.look(id)?.urls == [server.url("/bytes/4000000/c.bin")])
            #expect(server.requests.contains { $0.target == "/bytes/4000000/c.bin" }, "the new URL was used")
            let waiting = try asker.add(ServiceRequest(urls: ["http://127.0.0.1:1/w.bin"], paused: true))
            var options = ServiceDownloadOptions()
            options.connections = 3
            _ = try asker.enqueueChangeOptions(waiting, to: options)
            #expect(asker.look(waiting)?.options.connections == 3)
        }
    }

    @Test func aNodeWaitingForPostgreSQLStopsAtOnce() async throws {
        let cluster = try PostgresCluster.start()
        defer { cluster.destroy() }
        try await withTemporaryDirectory { (dir) async throws in
            let node = try FleetNodeTests.node("n", try PostgresSettings(cluster.url(database: "postgres")), dir, active: 1)
            try cluster.stop()
            await eventually { node.lastError != nil }
            try await Task.sleep(for: .seconds(2))   // the backoff has grown past a second
            let asked = ContinuousClock.now
            node.stop()
            #expect(ContinuousClock.now - asked < .milliseconds(900))
        }
    }

    @Test func transfersGoOnWhilePostgreSQLIsDownAndTheirResultsAreWrittenWhenItIsBack() async throws {
        let server = try HaulServer()
        let cluster = try PostgresCluster.start()
        defer { cluster.destroy() }
        let database = try PostgresSettings(cluster.url(database: "postgres"))
        try await withTemporaryDirectory { (dir) async throws in
            let node = try FleetNodeTests.node("n", database, dir, active: 1, lease: .seconds(3))
            defer { node.stop() }
            let id = try node.add(ServiceRequest(urls: [server.url("/bytes/600000/d.bin?rate=400000")]))
            await eventually { node.service.activeDownloads().count == 1 }
            try cluster.stop()
            let refusal = #expect(throws: ServiceError.self) { try node.add(ServiceRequest(urls: [server.url("/bytes/10/x.bin")])) }
            #expect(refusal?.code == .store, "a change is refused, never acknowledged, while the database is down")
            #expect(throws: ServiceError.self, "a read is refused, never answered empty") { try node.waitingDownloads { 0..<$0 } }
            #expect(throws: ServiceError.self) { try node.currentStatistics() }
            await eventually { node.service.download(id)?.status == .complete }
            #expect(node.lastError != nil)
            try cluster.startServer()
            await eventually { (try? node.stoppedDownloads { 0..<$0 })?.map(\.id) == [id] }
            await eventually { node.lastError == nil }
            #expect(node.look(id)?.status == .complete && node.look(id)?.node == "n")
            #expect(try node.waitingDownloads { 0..<$0 }.isEmpty, "the refused addition was never added")
        }
    }
}

/// A partial file locked by another process (in a shared folder, a node that stopped answering
/// but still holds it) sends the download back to the queue, not to a failure.
@Suite(.throttled, .enabled(if: PostgresCluster.isAvailable, "PostgreSQL is not installed"), .timeLimit(.minutes(1)))
struct FleetLockedFileTests {
    @Test func aLockedPartialFileGoesBackToTheQueueUntilTheLockIsGone() async throws {
        let server = try HaulServer()
        let database = try PostgresSettings(try #require(PostgresCluster.shared).makeDatabase())
        try await withTemporaryDirectory { (dir) async throws in
            let root = dir.appendingPathComponent("n/downloads")
            try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
            let partial = open(root.appendingPathComponent("locked.bin.part").path, O_RDWR | O_CREAT, 0o600)
            #expect(partial >= 0 && flock(partial, LOCK_EX | LOCK_NB) == 0)
            let node = try FleetNodeTests.node("n", database, dir, active: 1, lease: .seconds(1))
            defer { node.stop() }
            let id = try node.add(ServiceRequest(urls: [server.url("/bytes/100000/locked.bin")]))
            let key = String(Int64(bitPattern: id.rawValue))
            await eventually { ((try? FleetNodeTests.rows(database)[key])?.fence ?? 0) >= 2 }
            #expect(try FleetNodeTests.rows(database)[key]?.status != "error", "a locked file is no failure")
            close(partial)
            await eventually(timeout: .seconds(20)) { (try? FleetNodeTests.rows(database)[key])?.status == "complete" }
            #expect(try Data(contentsOf: root.appendingPathComponent("locked.bin")).count == 100_000)
        }
    }
}

/// The fence at the file's commit: a node whose claim was taken while its transfer ran never
/// gives the file its name.
/// Exclusive: paces the transfer (`rate=`) so that the claim is taken while it runs.
@Suite(.exclusive, .serialized, .enabled(if: PostgresCluster.isAvailable, "PostgreSQL is not installed"), .timeLimit(.minutes(1)))
struct FleetCommitFenceTests {
    @Test func aFileWhoseClaimWasTakenMeanwhileIsNeverNamed() async throws {
        let server = try HaulServer()
        let database = try PostgresSettings(try #require(PostgresCluster.shared).makeDatabase())
        try await withTemporaryDirectory { (dir) async throws in
            // A long lease: no renewal comes before the transfer (1.5 s) ends; the commit's check must catch it.
            let node = try FleetNodeTests.node("late", database, dir, active: 1, lease: .seconds(60))
            defer { node.stop() }
            let id = try node.add(ServiceRequest(urls: [server.url("/bytes/300000/fenced.bin?rate=200000")]))
            await eventually { node.service.activeDownloads().count == 1 }
            let thief = try PostgresConnection(database)
            defer { thief.close() }
            try thief.run("UPDATE haul_downloads SET fence = fence + 1, node = 'thief' WHERE gid = $1", [String(Int64(bitPattern: id.rawValue))])
            let root = dir.appendingPathComponent("late/downloads")
            await eventually { node.service.download(id) == nil }   // its run ended and this node let go of it
            #expect(!FileManager.default.fileExists(atPath: root.appendingPathComponent("fenced.bin").path), "the file took its name")
            let row = try #require(try FleetNodeTests.rows(database)[String(Int64(bitPattern: id.rawValue))])
            #expect(row.status == "active" && row.node == "thief" && row.fence == 2, "the new owner's row stands")
        }
    }
}
