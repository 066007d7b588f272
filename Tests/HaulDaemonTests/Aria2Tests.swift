import Foundation
import Testing
@testable import HaulService
@testable import Haul
@testable import HaulDaemon
import HaulJSON

/// aria2's conventions as pure functions: pagination, the bitfield, error codes, options.
@Suite struct Aria2Tests {
    @Test(arguments: [
        // (offset, num, size) -> places, reversed (aria2's getPaginationRange)
        (0, 2, 5, [0, 1], false), (3, 10, 5, [3, 4], false), (5, 1, 5, [], false), (0, 0, 5, [], false),
        (-1, 1, 5, [4], true), (-1, 2, 5, [3, 4], true), (-2, 3, 5, [1, 2, 3], true), (-1, 99, 5, [0, 1, 2, 3, 4], true),
        (-6, 1, 5, [], true), (-5, 1, 5, [0], true), (0, 1, 0, [], false), (Int.min, Int.max, 5, [], true),
    ])
    func paginationFollowsAria2(offset: Int, count: Int, size: Int, places: [Int], reversed: Bool) {
        let page = Aria2Pagination.page(offset: offset, count: count, size: size)
        #expect(Array(page.range) == places)
        #expect(page.reversed == reversed || places.isEmpty)
    }

    @Test func theBitfieldSetsWholePiecesOnly() {
        let mib = Aria2Status.pieceLength
        #expect(Aria2Status.bitfield([0..<mib], total: 3 * mib) == "80")
        #expect(Aria2Status.bitfield([0..<(mib - 1)], total: 3 * mib) == "00")
        #expect(Aria2Status.bitfield([mib..<(3 * mib)], total: 3 * mib - 10) == "60", "the last piece is short")
        #expect(Aria2Status.bitfield([0..<(mib / 2), (mib / 2)..<(9 * mib)], total: 9 * mib) == "ff80")
        #expect(Aria2Status.merge([5..<6, 0..<2, 1..<3, 3..<4]) == [0..<4, 5..<6])
    }

    @Test func aStatusHasAria2sKeysAsStringsInItsOrder() throws {
        let download = ServiceDownload(
            id: DownloadID(hex: "2089b05ecca3d829")!, urls: ["http://127.0.0.1:1/a.bin", "http://127.0.0.1:2/a.bin"],
            options: .init(), status: .error, directoryPath: "/root", filePath: "/root/a.bin", totalBytes: 3 << 20,
            completedBytes: 1 << 20, completedRanges: [0..<(1 << 20)], bytesPerSecond: 0, connections: 0,
            failure: ServiceFailure(code: "httpStatus", exitStatus: 8, httpStatus: 404, message: "the server answered 404"))
        let status = Aria2Status.json(download)
        let keys = try #require(status.object).members.map { $0.key }
        #expect(keys == ["bitfield", "completedLength", "connections", "dir", "downloadSpeed", "errorCode", "errorMessage",
                         "files", "gid", "numPieces", "pieceLength", "status", "totalLength", "uploadLength", "uploadSpeed"])
        #expect(status.object?["errorCode"] == "3")
        #expect(status.object?["totalLength"] == "3145728")
        #expect(status.object?["bitfield"] == "80")
        #expect(status.object?["numPieces"] == "3")
        let file = try #require(status.object?["files"]?.array?.first?.object)
        #expect(file["path"] == "/root/a.bin")
        #expect(file["uris"] == [["status": "used", "uri": "http://127.0.0.1:1/a.bin"],
                                 ["status": "waiting", "uri": "http://127.0.0.1:2/a.bin"]])
        let filtered = Aria2Status.json(download, keys: ["gid", "status", "nonsense"])
        #expect(filtered == ["gid": "2089b05ecca3d829", "status": "error"])
    }

    @Test(arguments: [
        ("connectTimeout", nil, 2), ("stalled", nil, 5), ("connectionRefused", nil, 6), ("diskFull", nil, 9),
        ("destinationExists", nil, 13), ("dnsFailure", nil, 19), ("tooManyRedirects", nil, 23), ("authenticationRefused", nil, 24),
        ("checksumMismatch", nil, 32), ("httpStatus", 404, 3), ("httpStatus", 503, 29), ("httpStatus", 500, 22), ("internalError", nil, 1),
        ("resourceExhausted", nil, 1),
    ])
    func failuresMapToAria2sExitCodes(code: String, http: Int?, expected: Int) {
        #expect(Aria2Status.errorCode(ServiceFailure(code: code, exitStatus: 1, httpStatus: http, message: "")) == expected)
    }

    @Test func optionsAreReadAsAria2WritesThem() throws {
        var options = ServiceDownloadOptions()
        let extras = try Aria2Options.apply(JSONObject([
            .init("dir", "sub"), .init("out", "x.bin"), .init("header", ["A: 1", "B:2"]), .init("split", "8"),
            .init("max-connection-per-server", "32"), .init("max-download-limit", "1M"), .init("allow-overwrite", "true"),
            .init("continue", "false"), .init("pause", "true"), .init("gid", "00000000000000aa"),
            .init("checksum", .string("sha-256=" + String(repeating: "0", count: 64))),
            .init("log", "/tmp/haul-evil.log"), .init("save-session", "/tmp/evil"), .init("on-download-complete", "/bin/sh"),
            .init("split-not-a-string", 3),
        ]), to: &options)
        #expect(options.directory == "sub")
        #expect(options.fileName == "x.bin")
        #expect(options.headers == [.init(name: "A", value: "1"), .init(name: "B", value: "2")])
        #expect(options.connections == 8)
        #expect(options.rateLimit == 1 << 20)
        #expect(options.overwrite && !options.continues)
        #expect(extras == Aria2Options.Extras(paused: true, id: DownloadID(hex: "00000000000000aa")))
        #expect(options.checksum?.algorithm == .sha256)
        for (name, value) in [("split", "0"), ("split", "x"), ("max-download-limit", "1G"), ("pause", "yes"), ("gid", "xyz"),
                              ("checksum", "sha-256=zz")] {
            var scratch = ServiceDownloadOptions()
            #expect(throws: RPCFault.self, "\(name)=\(value)") {
                try Aria2Options.apply(JSONObject([.init(name, .string(value))]), to: &scratch)
            }
        }
    }
}
