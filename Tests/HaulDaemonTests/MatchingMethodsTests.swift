import Foundation
import Haul
import HaulService
import HaulTestSupport
import Testing
@testable import HaulDaemon
import HaulJSON

/// `haul.tellMatching` and `haul.changeMatching` over a real service, without a socket: pages of
/// a filter's matches, bulk changes by filter or by GIDs, and a JSON-RPC error for each bad input.
@Suite struct MatchingMethodsTests {
    typealias RPC = Aria2RPCTests

    /// Twelve paused downloads (`m-00.bin` ... `m-11.bin`) pointing at a closed port.
    static func fill(_ rpc: Aria2RPC) -> [String] {
        (0..<12).compactMap { index in
            RPC.result(rpc, "aria2.addUri", [[.string("http://127.0.0.1:9/m-\(String(format: "%02d", index)).bin")], ["pause": "true"]]).string
        }
    }

    static func gids(_ answer: JSONValue) -> [String] {
        (answer.object?["downloads"]?.array ?? []).compactMap { $0.object?["gid"]?.string }
    }

    @Test func aPageOfTheMatchesAndTheirCount() async throws {
        try await RPC.withRPC { rpc, _, _ in
            let gids = Self.fill(rpc)
            let page = RPC.result(rpc, "haul.tellMatching", [["text": "M-0"], 2, 3, ["gid", "status"]])
            #expect(page.object?["total"] == "10")
            #expect(Self.gids(page) == Array(gids[2..<5]))
            let one = RPC.result(rpc, "haul.tellMatching", [["text": "m-11", "state": "paused"], 0, 10])
            #expect(Self.gids(one) == [gids[11]])
            #expect(RPC.result(rpc, "haul.tellMatching", [["state": "active"], 0, 10]).object?["total"] == "0")
            #expect(RPC.result(rpc, "haul.tellMatching", [[:], 50, 10]).object?["total"] == "12", "past the end: the count, no rows")
            let far = RPC.result(rpc, "haul.tellMatching", [[:], 9_223_372_036_854_775_807, 9_223_372_036_854_775_807])
            #expect(far.object?["total"] == "12" && Self.gids(far).isEmpty, "the largest offset and count overflow nothing")
            #expect(Self.gids(RPC.result(rpc, "haul.tellMatching", [[:], 11, 9_223_372_036_854_775_807])) == [gids[11]])
        }
    }

    @Test func badFiltersAndPagesAreRefused() async throws {
        try await RPC.withRPC { rpc, _, _ in
            #expect(RPC.error(rpc, "haul.tellMatching", [["state": "done"], 0, 1])?.contains("not one of all") == true)
            #expect(RPC.error(rpc, "haul.tellMatching", [["text": 7], 0, 1])?.contains("not a string") == true)
            #expect(RPC.error(rpc, "haul.tellMatching", [["colour": "red"], 0, 1])?.contains("unknown key") == true)
            #expect(RPC.error(rpc, "haul.tellMatching", [["text": .string(String(repeating: "a", count: 1_025))], 0, 1]) != nil)
            #expect(RPC.error(rpc, "haul.tellMatching", [[:], -1, 1])?.contains("offset") == true)
            #expect(RPC.error(rpc, "haul.tellMatching", [[:], 0, -1])?.contains("num") == true)
            #expect(RPC.error(rpc, "haul.tellMatching", ["m-"]) != nil, "the filter is an object")
            #expect(RPC.error(rpc, "haul.tellMatching", [["gids": []], 0, 1]) != nil, "a selection is not a filter")
            #expect(RPC.error(rpc, "haul.tellMatching", [["text": "a\u{0}b"], 0, 1])?.contains("control character") == true)
            #expect(RPC.error(rpc, "haul.tellMatching", [["text": "a\nb"], 0, 1])?.contains("control character") == true)
            #expect(RPC.error(rpc, "haul.changeMatching", ["stop", ["text": "m"]])?.contains("not one of pause") == true)
            #expect(RPC.error(rpc, "haul.changeMatching", ["pause", ["gids": ["xyz"]]])?.contains("Invalid GID") == true)
            #expect(RPC.error(rpc, "haul.changeMatching", ["pause", ["gids": [], "text": "a"]]) != nil, "gids alone")
            #expect(RPC.error(rpc, "haul.changeMatching", ["pause", ["text": "a", "except": "x"]]) != nil)
        }
    }

    @Test func aFiltersMatchesChangeInOneCallAndTheCountsSayWhatChanged() async throws {
        try await RPC.withRPC { rpc, service, _ in
            let gids = Self.fill(rpc)
            // Resume ten but one; the one left out and the two others stay paused.
            let resumed = RPC.result(rpc, "haul.changeMatching", ["unpause", ["text": "m-0", "except": [.string(gids[3])]]])
            #expect(resumed == ["changed": "9", "unchanged": "0"])
            #expect(service.waitingDownloads { 0..<$0 }.filter { $0.status == .paused }.count == 3)
            // Pausing them all again: the nine (or what the closed port left of them) change, the three did not.
            let paused = RPC.result(rpc, "haul.changeMatching", ["pause", ["text": "m-"]])
            let changed = Int(paused.object?["changed"]?.string ?? "") ?? -1
            #expect(changed + (Int(paused.object?["unchanged"]?.string ?? "") ?? 0) == 12)
            // Moved to the top by GIDs, in their order.
            let moved = RPC.result(rpc, "haul.changeMatching", ["moveToTop", ["gids": [.string(gids[10]), .string(gids[11])]]])
            #expect(moved.object?["changed"] == "2")
            #expect(service.waitingDownloads { _ in 0..<2 }.map(\.id.hex) == [gids[10], gids[11]])
            // Removed by filter: gone from the list, results and all.
            let removed = RPC.result(rpc, "haul.changeMatching", ["remove", ["text": "m-1"]])
            #expect(removed.object?["changed"] == "2")
            #expect(RPC.result(rpc, "haul.tellMatching", [["text": "m-1"], 0, 10]).object?["total"] == "0")
            #expect(RPC.result(rpc, "haul.tellMatching", [[:], 0, 0]).object?["total"] == "10")
        }
    }
}
