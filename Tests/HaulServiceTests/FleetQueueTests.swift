import Foundation
import HaulTestSupport
import Synchronization
import Testing
@testable import Haul
@testable import HaulService

/// The fleet's claims on PostgreSQL: every waiting download is claimed by exactly one of many
/// nodes claiming at once, in queue order; a lease that ends lets another node claim with a
/// higher fencing number, after which the first node can neither renew nor write; an addition
/// wakes a listening node.
@Suite(.throttled, .enabled(if: PostgresCluster.isAvailable, "PostgreSQL is not installed"))
struct FleetQueueTests {
    static func rows(_ count: Int, from first: UInt64 = 1) -> [StoreRow] {
        (first..<first + UInt64(count)).map { value in
            StoreRow(ServiceQueue.Entry(id: DownloadID(rawValue: value)!, urls: ["http://127.0.0.1:1/\(value).bin"],
                                        options: ServiceDownloadOptions(), status: .waiting, position: Double(value)))
        }
    }

    @Test func nodesClaimingAtOnceClaimEveryDownloadExactlyOnceInQueueOrder() async throws {
        let settings = try PostgresSettings(try #require(PostgresCluster.shared).makeDatabase())
        let adder = try FleetQueue(settings, node: "adder")
        try adder.add(Self.rows(2_000))
        adder.close()
        let claims = try await withThrowingTaskGroup(of: [(node: String, id: UInt64, fence: Int64)].self) { group in
            for node in ["a", "b", "c", "d"] {
                group.addTask {
                    try await onOwnThread {
                        let queue = try FleetQueue(settings, node: node)
                        defer { queue.close() }
                        var mine: [(node: String, id: UInt64, fence: Int64)] = []
                        while case let batch = try queue.claim(limit: 7, lease: .seconds(30)), !batch.isEmpty {
                            guard zip(batch, batch.dropFirst()).allSatisfy({ $0.row.position < $1.row.position }) else {
                                throw PostgresCluster.Failure("a batch of claims out of queue order")
                            }
                            mine += batch.map { (node, $0.claim.id.rawValue, $0.claim.fence) }
                        }
                        return mine
                    }
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
        #expect(claims.count == 2_000)
        #expect(Set(claims.map(\.id)) == Set(1...2_000))
        #expect(claims.allSatisfy { $0.fence == 1 })
        #expect(Set(claims.map(\.node)).count > 1, "the claims were not shared: \(Set(claims.map(\.node)))")
    }

    @Test func aLeaseThatEndsIsTakenOverAndTheOldClaimIsFencedOut() throws {
        let settings = try PostgresSettings(try #require(PostgresCluster.shared).makeDatabase())
        let first = try FleetQueue(settings, node: "first"), second = try FleetQueue(settings, node: "second")
        defer { first.close(); second.close() }
        try first.add(Self.rows(1))
        let old = try #require(try first.claim(limit: 1, lease: .milliseconds(300)).first)
        #expect(old.claim.fence == 1)
        #expect(try second.claim(limit: 1, lease: .seconds(30)).isEmpty, "a lease that holds is not taken")
        #expect(try first.renew([old.claim], lease: .milliseconds(300)).isEmpty)
        Thread.sleep(forTimeInterval: 0.5)
        let new = try #require(try second.claim(limit: 1, lease: .seconds(30)).first)
        #expect(new.claim == FleetClaim(id: old.claim.id, fence: 2))
        #expect(try first.renew([old.claim], lease: .seconds(30)) == [old.claim])
        var finished = old.row
        finished.status = .complete
        #expect(try first.write(finished, under: old.claim) == false, "the old fence writes nothing")
        #expect(try second.write(finished, under: new.claim) == true)
        #expect(try second.renew([new.claim], lease: .seconds(30)) == [new.claim], "a result is no longer a claim")
    }

    @Test func aLeaseThatEndedButThatNobodyTookIsStillRenewed() throws {
        let settings = try PostgresSettings(try #require(PostgresCluster.shared).makeDatabase())
        let queue = try FleetQueue(settings, node: "only")
        defer { queue.close() }
        try queue.add(Self.rows(1))
        let claim = try #require(try queue.claim(limit: 1, lease: .milliseconds(1)).first).claim
        Thread.sleep(forTimeInterval: 0.05)
        #expect(try queue.renew([claim], lease: .seconds(30)).isEmpty)
    }

    @Test func aPauseLetsGoOfTheClaimAndTheDownloadIsClaimedAgainWhenWaiting() throws {
        let settings = try PostgresSettings(try #require(PostgresCluster.shared).makeDatabase())
        let queue = try FleetQueue(settings, node: "n")
        defer { queue.close() }
        try queue.add(Self.rows(1))
        let claimed = try #require(try queue.claim(limit: 1, lease: .seconds(30)).first)
        var waiting = claimed.row
        waiting.status = .waiting
        #expect(try queue.write(waiting, under: claimed.claim))
        #expect(try queue.claim(limit: 1, lease: .seconds(30)).first?.claim == FleetClaim(id: claimed.claim.id, fence: 2))
    }

    @Test func rowsWrittenTogetherKeepTheirTextAndOnlyHeldClaimsWrite() throws {
        let settings = try PostgresSettings(try #require(PostgresCluster.shared).makeDatabase())
        let queue = try FleetQueue(settings, node: "n"), other = try FleetQueue(settings, node: "other")
        defer { queue.close(); other.close() }
        try queue.add(Self.rows(3))
        let claimed = try queue.claim(limit: 3, lease: .seconds(30))
        let names = ["/d/a \"quoted\", {braced}\\back\nline NULL\u{0}end", "/d/caf\u{E9} \u{1F4E6}", "NULL"]
        var pending = zip(claimed, names).map { claimed, name in
            var row = claimed.row
            (row.status, row.file, row.totalBytes, row.completedBytes) = (.complete, name, 42, 42)
            return (row: row, claim: claimed.claim)
        }
        pending[2].row.failure = ServiceFailure(code: "http", exitStatus: 22, httpStatus: 404, message: "a \"b\" \\ c")
        pending[2].row.status = .error
        pending[1].claim = FleetClaim(id: pending[1].claim.id, fence: pending[1].claim.fence + 1)   // not held: another node's claim
        #expect(try queue.write(pending) == [pending[0].row.id, pending[2].row.id])
        let read = try Dictionary(uniqueKeysWithValues: [0, 1, 2].map { (pending[$0].row.id, try #require(try other.row(pending[$0].row.id))) })
        #expect(read[pending[0].row.id]?.row.file == names[0].replacing("\u{0}", with: ""), "U+0000 left out, the rest kept")
        #expect(read[pending[0].row.id]?.row.status == .complete)
        #expect(read[pending[1].row.id]?.row.status == .active, "a claim not held writes nothing")
        #expect(read[pending[1].row.id]?.row.file == nil)
        #expect(read[pending[2].row.id]?.row.file == "NULL", "the word NULL is text, not a null")
        #expect(read[pending[2].row.id]?.row.failure == pending[2].row.failure)
    }

    @Test func aClaimWithHalfALeaseLeftHoldsWithoutAWriteAndAShorterOneIsExtended() throws {
        let settings = try PostgresSettings(try #require(PostgresCluster.shared).makeDatabase())
        let queue = try FleetQueue(settings, node: "n"), other = try FleetQueue(settings, node: "other")
        defer { queue.close(); other.close() }
        try queue.add(Self.rows(2))
        let claims = try queue.claim(limit: 2, lease: .seconds(30)).map(\.claim)
        let leaseOf = { (claim: FleetClaim) throws -> String? in
            try other.connection.value("SELECT lease_until FROM haul_downloads WHERE gid = $1", [FleetQueue.text(claim.id)])
        }
        let before = try leaseOf(claims[0])
        #expect(try queue.holds(claims[0], lease: .seconds(30)))
        #expect(try leaseOf(claims[0]) == before, "more than half a lease left: read, not written")
        #expect(try queue.holds(claims[1], lease: .seconds(120)), "less than half of a 120 s lease left: extended")
        #expect(try leaseOf(claims[1]).map { $0 > (before ?? "") } == true)
        #expect(try !queue.holds(FleetClaim(id: claims[0].id, fence: claims[0].fence + 1), lease: .seconds(30)), "another fence")
    }

    @Test func eventsTravelManyToANotificationAndComeBackInOrder() {
        let events = (1...450).map { ServiceEvent(id: DownloadID(rawValue: UInt64($0) << 40)!, kind: $0 % 2 == 0 ? .completed : .forgotten) }
        let payloads = FleetQueue.payloads(events)
        #expect(payloads.count == 3)
        #expect(payloads.allSatisfy { $0.utf8.count < 8_000 })
        #expect(payloads.flatMap(FleetQueue.events) == events)
        #expect(FleetQueue.events("0000000000000001 started\nnot an event\n0000000000000002 nonsense") == [
            ServiceEvent(id: DownloadID(rawValue: 1)!, kind: .started)])
    }

    @Test func anAdditionWakesAListeningNode() async throws {
        let settings = try PostgresSettings(try #require(PostgresCluster.shared).makeDatabase())
        let listener = try FleetQueue(settings, node: "listener")
        defer { listener.close() }
        try listener.listen()
        #expect(try listener.waitForNotifications(timeout: .milliseconds(50)).isEmpty)
        let adder = try FleetQueue(settings, node: "adder")
        defer { adder.close() }
        try adder.add(Self.rows(3))
        let woken = try listener.waitForNotifications(timeout: .seconds(10))
        #expect(woken.map(\.channel) == [FleetQueue.workChannel])
    }
}

/// A thousand additions through a node's RPC path are one commit, durable when waited for.
@Suite(.throttled, .enabled(if: PostgresCluster.isAvailable, "PostgreSQL is not installed"))
struct FleetGroupAddTests {
    @Test func aThousandQueuedAdditionsAreCommittedByOneWait() async throws {
        let database = try PostgresSettings(try #require(PostgresCluster.shared).makeDatabase())
        try await withTemporaryDirectory { (dir) async throws in
            var configuration = FleetNode.Configuration(node: "n", database: database, service: serviceConfiguration(dir, active: 1))
            configuration.lease = .seconds(30)
            let node = try FleetNode(configuration: configuration)
            defer { node.stop() }
            _ = try node.setMaximumActiveDownloads(1)
            var (first, last): (UInt64?, UInt64?) = (nil, nil)
            var ids: [DownloadID] = []
            for index in 0..<1_000 {
                let added = try node.enqueueAdd(ServiceRequest(urls: ["http://127.0.0.1:1/\(index).bin"], paused: true))
                (first, last, ids) = (first ?? added.ticket, added.ticket, ids + [added.value])
            }
            #expect(try node.waitingDownloads { 0..<$0 }.isEmpty, "nothing is in the table before the wait")
            try node.waitUntilDurable(last, since: first)
            let taken = #expect(throws: ServiceError.self) {
                try node.enqueueAdd(ServiceRequest(urls: ["http://127.0.0.1:1/again.bin"], id: ids[0]))
            }
            #expect(taken?.code == .idInUse, "a GID taken is refused when asked, not with the next commit")
            #expect(try node.waitingDownloads { 0..<$0 }.count == 1_000)
            #expect(try node.currentStatistics().waiting == 1_000)
            #expect(try node.waitingDownloads { max(0, $0 - 2)..<$0 }.map(\.id) == Array(ids.suffix(2)), "places from the end")
            #expect(try node.waitingDownloads { _ in 998..<1_005 }.map(\.id) == Array(ids.suffix(2)), "a page past the end")
        }
    }
}
