import Foundation
import HaulTestSupport
import Testing
@testable import Haul
@testable import HaulService

/// A fleet's list filtered from any node: PostgreSQL narrows the rows, the filter checks them,
/// in the list's order, with the page's rows read back.
@Suite(.throttled, .enabled(if: PostgresCluster.isAvailable, "PostgreSQL is not installed"), .timeLimit(.minutes(1)))
struct FleetFilterTests {
    @Test func anyNodeFindsTheFleetsMatchesInTheListsOrder() async throws {
        let database = try PostgresSettings(try #require(PostgresCluster.shared).makeDatabase())
        try await withTemporaryDirectory { (dir) async throws in
            let nodes = try ["a", "b"].map { try FleetNodeTests.node($0, database, dir, active: 1) }
            defer { nodes.forEach { $0.stop() } }
            var ids: [DownloadID] = []
            for index in 0..<6 {
                let url = "http://127.0.0.1:9/Part-\(index).ISO?x=%25"
                ids.append(try nodes[index % 2].add(ServiceRequest(urls: [url], paused: true)))
            }
            let other = try nodes[0].add(ServiceRequest(urls: ["http://127.0.0.1:9/%C3%89T%C3%89/ÉTÉ.bin"], paused: true))
            // Only ASCII letters fold, in PostgreSQL as in one service's index.
            #expect(try nodes[1].matches(DownloadFilter(text: "ÉTÉ")).map(\.id) == [other])
            #expect(try nodes[1].matches(DownloadFilter(text: "été")).isEmpty)
            #expect(try nodes[1].matches(DownloadFilter(text: "%c3%89t")).map(\.id) == [other])
            // The out name is found as given, its stored escapes undone.
            var options = ServiceDownloadOptions()
            options.fileName = "Half 50%.BIN"
            let named = try nodes[0].add(ServiceRequest(urls: ["http://127.0.0.1:9/x"], options: options, paused: true))
            #expect(try nodes[1].matches(DownloadFilter(text: "half 50%.bin")).map(\.id) == [named])
            #expect(try nodes[1].matches(DownloadFilter(text: "50%25")).isEmpty)
            let connection = try PostgresConnection(database)
            defer { connection.close() }
            try connection.run("DELETE FROM haul_downloads WHERE gid = $1", [PostgresLayout.key(named)])
            #expect(try nodes[1].matches(DownloadFilter(text: "part-")).map(\.id) == ids, "the queue in order, from the other node")
            #expect(try nodes[0].matches(DownloadFilter(text: ".iso?x=%25", statuses: [.paused])).count == 6)
            #expect(try nodes[0].matches(DownloadFilter(text: "part-", statuses: [.waiting])).isEmpty)
            #expect(try nodes[1].matches(DownloadFilter()).map(\.id) == ids + [other])
            let page = try nodes[1].matchingDownloads(DownloadFilter(text: "PART")) { size in 4..<size }
            #expect(page.total == 6)
            #expect(page.downloads.map(\.id) == Array(ids[4...]))
            #expect(page.downloads.allSatisfy { $0.status == .paused })
        }
    }

    @Test func aDatabaseOfTheFirstLayoutGetsTheSearchColumn() async throws {
        let database = try PostgresSettings(try #require(PostgresCluster.shared).makeDatabase())
        try await withTemporaryDirectory { (dir) async throws in
            do {
                let node = try FleetNodeTests.node("a", database, dir, active: 1)
                _ = try node.add(ServiceRequest(urls: ["http://127.0.0.1:9/Old.bin"], paused: true))
                node.stop()
            }
            let connection = try PostgresConnection(database)
            defer { connection.close() }
            try connection.run("ALTER TABLE haul_downloads DROP COLUMN search")
            try connection.run("UPDATE haul_schema SET version = 1")
            let node = try FleetNodeTests.node("a", database, dir, active: 1)
            defer { node.stop() }
            #expect(try node.matches(DownloadFilter(text: "old.BIN")).count == 1)
            #expect(try connection.value("SELECT max(version) FROM haul_schema") == "2")
        }
    }
}
