import Foundation
import Haul
import HaulServer
import HaulService
import HaulTestSupport
import Testing
@testable import HaulDaemon
import HaulCore
import HaulCrypto
import HaulJSON

/// The JSON-RPC dispatcher without a socket: JSON-RPC's error codes and aria2's conventions
/// (tokens, strings for numbers, "OK", words of the errors) over a real service.
/// Exclusive: some tests run paced downloads against the loopback server and time the answers.
@Suite(.exclusive, .serialized) struct Aria2RPCTests {
    /// A service in a temporary folder and the RPC over it.
    static func withRPC(secret: String? = "sekret", active: Int = 2,
                        _ body: (Aria2RPC, DownloadService, ShutdownLog) async throws -> Void) async throws {
        try await withTemporaryDirectory { (dir) async throws in
            var engine = Downloader.Configuration()
            engine.maximumActiveDownloads = active
            engine.retry = RetryPolicy(maximumRetries: 0)
            let service = try DownloadService(configuration: .init(root: dir.appendingPathComponent("root"),
                                                                   stateFile: dir.appendingPathComponent("state.db"),
                                                                   downloader: engine))
            defer { service.shutDown() }
            let shutdowns = ShutdownLog()
            let rpc = Aria2RPC(service: service, settings: .init(secret: secret, listen: ListenAddress(host: "127.0.0.1", port: 6800),
                                                                 connections: 4),
                               onShutdown: { force in shutdowns.requests.withLock { $0.append(force) } })
            try await body(rpc, service, shutdowns)
        }
    }

    /// Sends a call; returns the HTTP status and the parsed reply.
    @discardableResult
    static func send(_ rpc: Aria2RPC, _ text: String) -> (Int, JSONValue) {
        let reply = rpc.handle(Array(text.utf8))
        return (reply.status, (try? JSONParser().parse(reply.body)) ?? .null)
    }

    /// Calls `method`, with the token first unless `token` is false (`system.*` methods take none).
    static func call(_ rpc: Aria2RPC, _ method: String, _ params: [JSONValue] = [], token: Bool = true) -> (Int, JSONValue) {
        let all: [JSONValue] = (token && !method.hasPrefix("system.") ? ["token:sekret"] : []) + params
        return send(rpc, String(decoding: JSONWriter.encode(["jsonrpc": "2.0", "id": "q", "method": .string(method),
                                                             "params": .array(all)]), as: UTF8.self))
    }

    static func result(_ rpc: Aria2RPC, _ method: String, _ params: [JSONValue] = []) -> JSONValue {
        call(rpc, method, params).1.object?["result"] ?? .null
    }

    static func error(_ rpc: Aria2RPC, _ method: String, _ params: [JSONValue] = []) -> String? {
        call(rpc, method, params).1.object?["error"]?.object?["message"]?.string
    }

    @Test func jsonRPCErrorsHaveTheirCodesAndStatuses() async throws {
        try await Self.withRPC { rpc, _, _ in
            let parse = Self.send(rpc, "{nope")
            #expect(parse.0 == 500)
            #expect(parse.1 == ["error": ["code": -32700, "message": "Parse error."], "id": nil, "jsonrpc": "2.0"])
            #expect(Self.send(rpc, #"{"jsonrpc":"2.0","method":"aria2.getVersion"}"#).1.object?["error"]?.object?["code"] == -32600)
            #expect(Self.send(rpc, #"{"jsonrpc":"2.0","method":"aria2.getVersion"}"#).0 == 400)
            #expect(Self.send(rpc, #"{"jsonrpc":"2.0","id":1,"method":7}"#).1.object?["error"]?.object?["code"] == -32600)
            let named = Self.send(rpc, #"{"jsonrpc":"2.0","id":1,"method":"aria2.tellActive","params":{"a":1}}"#)
            #expect(named.1.object?["error"]?.object?["code"] == -32602)
            let unknown = Self.send(rpc, #"{"jsonrpc":"2.0","id":1,"method":"aria2.nope","params":[]}"#)
            #expect(unknown.0 == 404)
            #expect(unknown.1.object?["error"]?.object?["code"] == -32601)
            #expect(Self.send(rpc, "7").1.object?["error"]?.object?["code"] == -32600)
            #expect(Self.send(rpc, "[]").1.object?["error"]?.object?["code"] == -32600)
        }
    }

    @Test func theTokenIsRequiredExceptWhereAria2WaivesIt() async throws {
        try await Self.withRPC { rpc, _, _ in
            let missing = Self.call(rpc, "aria2.getVersion", token: false)
            #expect(missing.0 == 400)
            #expect(missing.1.object?["error"] == ["code": 1, "message": "Unauthorized"])
            #expect(rpc.handle(Array(#"{"jsonrpc":"2.0","id":1,"method":"aria2.getVersion","params":["token:wrong"]}"#.utf8)).unauthorized)
            #expect(Self.call(rpc, "aria2.getVersion").0 == 200)
            #expect(Self.call(rpc, "system.listMethods", token: false).1.object?["result"]?.array?.contains("aria2.addUri") == true)
            #expect(Self.call(rpc, "system.listNotifications", token: false).1.object?["result"]
                    == ["aria2.onDownloadStart", "aria2.onDownloadPause", "aria2.onDownloadStop", "aria2.onDownloadComplete",
                        "aria2.onDownloadError"])
            #expect(Self.send(rpc, #"{"jsonrpc":"2.0","id":1,"method":"system.listMethods","params":["token:x"]}"#).0 == 200,
                    "a token given anyway is ignored")
            #expect(Self.call(rpc, "haul.getNodes").1.object?["result"] == [], "one daemon on its state file is no fleet")
            #expect(Self.call(rpc, "haul.getNodes", token: false).0 == 400, "haul.getNodes takes the token")
        }
    }

    @Test func withoutASecretNoTokenIsNeeded() async throws {
        try await Self.withRPC(secret: nil) { rpc, _, _ in
            #expect(Self.call(rpc, "aria2.getVersion", token: false).0 == 200)
            #expect(rpc.handle(Array(#"{"jsonrpc":"2.0","id":1,"method":"aria2.getVersion"}"#.utf8)).authorized)
        }
    }

    @Test func addListPauseMoveAndRemoveAsAria2Does() async throws {
        try await Self.withRPC { rpc, service, _ in
            var gids: [String] = []
            for index in 0..<4 {
                let gid = Self.result(rpc, "aria2.addUri", [.array([.string("http://127.0.0.1:1/\(index).bin")]), ["pause": "true"]])
                gids.append(try #require(gid.string))
                #expect(gids.last?.utf8.count == 16)
            }
            let waiting = Self.result(rpc, "aria2.tellWaiting", [0, 1000, ["gid", "status", "totalLength"]])
            #expect(waiting.array?.count == 4)
            #expect(waiting.array?.first == ["gid": .string(gids[0]), "status": "paused", "totalLength": "0"])
            #expect(Self.result(rpc, "aria2.tellWaiting", [-1, 2, ["gid"]]) == [["gid": .string(gids[3])], ["gid": .string(gids[2])]])
            #expect(Self.result(rpc, "aria2.changePosition", [.string(gids[3]), 0, "POS_SET"]) == 0)
            #expect(Self.result(rpc, "aria2.changePosition", [.string(gids[3]), -1, "POS_END"]) == 2)
            #expect(Self.error(rpc, "aria2.changePosition", [.string(gids[3]), 0, "POS_WHERE"]) == "Illegal argument.")
            #expect(Self.error(rpc, "aria2.pause", [.string(gids[0])]) == "GID#\(gids[0]) cannot be paused now")
            #expect(Self.result(rpc, "aria2.remove", [.string(gids[1])]) == .string(gids[1]))
            #expect(Self.result(rpc, "aria2.tellStatus", [.string(gids[1]), ["status", "errorCode"]])
                    == ["errorCode": "31", "status": "removed"])
            #expect(Self.error(rpc, "aria2.remove", [.string(gids[1])]) == "Active Download not found for GID#\(gids[1])")
            #expect(Self.result(rpc, "aria2.tellStopped", [0, 10, ["gid"]]) == [["gid": .string(gids[1])]])
            #expect(Self.result(rpc, "aria2.getGlobalStat") == ["downloadSpeed": "0", "numActive": "0", "numStopped": "1",
                                                                   "numStoppedTotal": "1", "numWaiting": "3", "uploadSpeed": "0"])
            #expect(Self.result(rpc, "aria2.removeDownloadResult", [.string(gids[1])]) == "OK")
            #expect(Self.error(rpc, "aria2.removeDownloadResult", [.string(gids[0])])
                    == "Could not remove download result of GID#\(gids[0])")
            #expect(Self.result(rpc, "aria2.purgeDownloadResult") == "OK")
            #expect(service.statistics.waiting == 3)
        }
    }

    @Test func gidsFollowAria2sRules() async throws {
        try await Self.withRPC { rpc, _, _ in
            let gid = try #require(Self.result(rpc, "aria2.addUri", [["http://127.0.0.1:1/a"], ["pause": "true", "gid": "00000000000000ab"]]).string)
            #expect(gid == "00000000000000ab")
            #expect(Self.error(rpc, "aria2.addUri", [["http://127.0.0.1:1/b"], ["gid": "00000000000000ab"]]) == "GID 00000000000000ab is in use")
            #expect(Self.error(rpc, "aria2.tellStatus", ["invalid gid"]) == "Invalid GID invalid gid")
            #expect(Self.error(rpc, "aria2.tellStatus", ["0000000000000002"]) == "GID 0000000000000002 is not found")
            #expect(Self.result(rpc, "aria2.tellStatus", ["00000000000000a", ["gid"]]) == ["gid": "00000000000000ab"], "a unique prefix")
            #expect(Self.error(rpc, "aria2.unpause", ["00000000000000ab"]) == nil)
            #expect(Self.error(rpc, "aria2.unpause", ["00000000000000ab"]) == "GID#00000000000000ab cannot be unpaused now")
            #expect(Self.error(rpc, "aria2.tellStatus", []) == "The parameter at 0 is required but missing.")
            #expect(Self.error(rpc, "aria2.tellStatus", [7]) == "The parameter at 0 has wrong type.")
            #expect(Self.error(rpc, "aria2.addUri", [[]]) == "URI is not provided.")
            #expect(Self.error(rpc, "aria2.addUri", [["http://127.0.0.1:1/a"], [:], -1]) == "Position must be greater than or equal to 0.")
        }
    }

    @Test func pathsOutsideTheRootAreRefusedAndPathOptionsIgnored() async throws {
        try await Self.withRPC { rpc, service, _ in
            for options: JSONValue in [["dir": "../up"], ["dir": "/etc"], ["out": "../x"], ["out": "/etc/passwd"], ["out": "a/b"]] {
                let message = Self.error(rpc, "aria2.addUri", [["http://127.0.0.1:1/a"], options])
                #expect(message != nil, "\(options)")
            }
            #expect(service.statistics.waiting == 0)
            let gid = Self.result(rpc, "aria2.addUri", [["http://127.0.0.1:1/a"],
                                                        ["pause": "true", "log": "/tmp/x.log", "save-session": "/tmp/s",
                                                         "on-download-complete": "/bin/sh", "input-file": "/etc/passwd"]])
            #expect(gid.string != nil, "unknown options are ignored as aria2 ignores them")
            let options = Self.result(rpc, "aria2.getOption", [gid])
            #expect(options.object?["log"] == nil && options.object?["on-download-complete"] == nil)
            #expect(Self.result(rpc, "aria2.changeGlobalOption", [["log": "/tmp/haul.log", "save-session": "/tmp/s", "dir": "/"]]) == "OK")
            #expect(Self.result(rpc, "aria2.getGlobalOption").object?["dir"] == .string(service.rootPath))
        }
    }

    @Test func batchesAndMulticallsCarryTheirOwnTokens() async throws {
        try await Self.withRPC { rpc, _, _ in
            let batch = Self.send(rpc, #"""
                [{"jsonrpc":"2.0","id":1,"method":"aria2.getVersion","params":["token:sekret"]},
                 {"jsonrpc":"2.0","id":2,"method":"aria2.getVersion"}, 5]
                """#)
            #expect(batch.0 == 200)
            #expect(batch.1.array?.count == 2)
            #expect(batch.1.array?[1].object?["error"]?.object?["message"] == "Unauthorized")
            let multicall = Self.result(rpc, "system.multicall", [[
                ["methodName": "aria2.addUri", "params": ["token:sekret", ["http://127.0.0.1:1/m"], ["pause": "true"]]],
                ["methodName": "aria2.getGlobalStat", "params": ["token:wrong"]],
                ["methodName": "system.multicall", "params": []],
                ["methodName": "aria2.nope", "params": ["token:sekret"]],
                "not a struct",
            ]])
            let entries = try #require(multicall.array)
            #expect(entries.count == 5)
            #expect(entries[0].array?.first?.string?.utf8.count == 16)
            #expect(entries[1] == ["code": 1, "message": "Unauthorized"])
            #expect(entries[2] == ["code": 1, "message": "Recursive system.multicall forbidden."])
            #expect(entries[3] == ["code": 1, "message": "No such method: aria2.nope"])
            #expect(entries[4] == ["code": 1, "message": "system.multicall expected struct."])
            let reply = rpc.handle(Array(#"{"jsonrpc":"2.0","id":1,"method":"system.multicall","params":[[{"methodName":"aria2.getVersion","params":["token:no"]}]]}"#.utf8))
            #expect(reply.unauthorized, "a failed token inside a multicall delays the answer too")
        }
    }

    @Test func aThousandAdditionsInOneMulticallAreDurableAtTheReply() async throws {
        try await Self.withRPC(active: 1) { rpc, service, _ in
            let calls: [JSONValue] = (0..<1000).map { index in
                ["methodName": "aria2.addUri", "params": ["token:sekret", .array([.string("http://127.0.0.1:1/\(index)")]), ["pause": "true"]]]
            }
            let clock = ContinuousClock()
            let start = clock.now
            let result = Self.result(rpc, "system.multicall", [.array(calls)])
            let elapsed = clock.now - start
            #expect(result.array?.count == 1000)
            #expect(service.statistics.waiting == 1000)
            #expect(elapsed < .seconds(5), "\(elapsed)")
        }
    }

    @Test func theSecretNeverComesBack() async throws {
        try await Self.withRPC { rpc, _, _ in
            for method in ["aria2.getGlobalOption", "aria2.getVersion", "aria2.getSessionInfo"] {
                #expect(!String(decoding: rpc.handle(Array(#"{"jsonrpc":"2.0","id":1,"method":"\#(method)","params":["token:sekret"]}"#.utf8)).body,
                                as: UTF8.self).contains("sekret"))
            }
            let echoed = Self.error(rpc, "aria2.tellStatus", ["sekret-as-a-gid"])
            #expect(echoed == "Invalid GID ***-as-a-gid")
            #expect(rpc.redacting("a sekret b") == "a *** b")
        }
    }

    @Test func shutdownSaysOKAndAsksTheDaemonToStop() async throws {
        try await Self.withRPC { rpc, _, shutdowns in
            #expect(Self.result(rpc, "aria2.shutdown") == "OK")
            #expect(Self.result(rpc, "aria2.forceShutdown") == "OK")
            #expect(Self.result(rpc, "aria2.saveSession") == "OK")
            #expect(shutdowns.requests.withLock { $0 } == [false, true])
        }
    }

    @Test func anActiveDownloadHasServersNoPeersAndItsFiles() async throws {
        let server = try HaulServer()
        server.setResource("/slow.bin", HaulServer.Resource(size: 4 << 20, seed: 1, etag: "\"a\"", rate: 500_000))
        try await Self.withRPC { rpc, service, _ in
            let gid = Self.result(rpc, "aria2.addUri", [[.string(server.url("/slow.bin"))], ["split": "1"]])
            let id = try #require(gid.string.flatMap { DownloadID(hex: $0) })
            let deadline = ContinuousClock.now + .seconds(10)
            while (service.download(id)?.completedBytes ?? 0) == 0 && ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(20))
            }
            #expect(Self.result(rpc, "aria2.tellStatus", [gid, ["status"]]) == ["status": "active"])
            let servers = Self.result(rpc, "aria2.getServers", [gid])
            #expect(servers.array?.first?.object?["servers"]?.array?.isEmpty == false)
            #expect(Self.result(rpc, "aria2.getPeers", [gid]) == [])
            let files = Self.result(rpc, "aria2.getFiles", [gid])
            #expect(files.array?.first?.object?["path"] == .string(service.rootPath + "/slow.bin"))
            #expect(Self.result(rpc, "aria2.getUris", [gid]) == [["status": "used", "uri": .string(server.url("/slow.bin"))]])
            #expect(Self.result(rpc, "aria2.pause", [gid]) == gid)
            #expect(Self.result(rpc, "aria2.tellStatus", [gid, ["status"]]) == ["status": "paused"], "paused before the reply")
            #expect(Self.error(rpc, "aria2.getServers", [gid]) == "No active download for GID#\(gid.string!)")
        }
    }

    @Test func addUriWithSeveralURIsFetchesFromAllOfThem() async throws {
        let servers = try [HaulServer(), HaulServer()]
        for server in servers { server.setResource("/m.bin", HaulServer.Resource(size: 3 << 20, seed: 5, etag: "\"m\"", rate: 600_000)) }
        let uris = servers.map { JSONValue.string($0.url("/m.bin")) }
        try await Self.withRPC { rpc, service, _ in
            let gid = Self.result(rpc, "aria2.addUri", [.array(uris), ["split": "4"]])
            let id = try #require(gid.string.flatMap { DownloadID(hex: $0) })
            #expect(await eventually(timeout: .seconds(20)) { servers.allSatisfy { $0.bodyBytesSent > 0 } || service.download(id)?.status != .active })
            let statuses = Self.result(rpc, "aria2.getUris", [gid]).array?.compactMap { $0.object?["status"]?.string }
            #expect(statuses == ["used", "used"], "both servers are in use: \(String(describing: statuses))")
            let listed = Self.result(rpc, "aria2.getServers", [gid]).array?.first?.object?["servers"]?.array ?? []
            #expect(Set(listed.compactMap { $0.object?["currentUri"]?.string }) == Set(servers.map { $0.url("/m.bin") }), "\(listed)")
            let sources = Self.result(rpc, "aria2.tellStatus", [gid, ["sources"]]).object?["sources"]?.array ?? []
            #expect(sources.compactMap { $0.object?["uri"]?.string } == servers.map { $0.url("/m.bin") }, "\(sources)")
            #expect(sources.allSatisfy { $0.object?["state"] == "active" }, "\(sources)")
            #expect(await eventually(timeout: .seconds(30)) { service.download(id)?.status == .complete })
            let path = try #require(service.download(id)?.filePath)
            #expect(FileManager.default.contents(atPath: path) == Data(HaulServer.content(seed: 5).bytes(0..<(3 << 20))))
        }
    }

    @Test func addMetalinkAddsEachFileWithItsServersNameAndHash() async throws {
        let (first, second) = (try HaulServer(), try HaulServer())
        let digest = try #require(HaulServer.content(seed: 4).sha256Hex(length: 200_000))
        let urls = [first, second].map { "<url>\($0.url("/bytes/200000/x?seed=4").replacingOccurrences(of: "&", with: "&amp;"))</url>" }.joined()
        let document = #"<?xml version="1.0"?><metalink xmlns="urn:ietf:params:xml:ns:metalink">"#
            + #"<file name="a.bin"><hash type="sha-256">\#(digest)</hash>\#(urls)</file>"#
            + #"<file name="sub/b.bin"><hash type="sha-256">\#(digest)</hash>\#(urls)</file>"#
            + #"<file name="../c.bin">\#(urls)</file></metalink>"#
        let encoded = Data(document.utf8).base64EncodedString()
        try await Self.withRPC { rpc, service, _ in
            let gids = Self.result(rpc, "aria2.addMetalink", [.string(encoded)]).array?.compactMap(\.string) ?? []
            #expect(gids.count == 2, "the file named ../c.bin is skipped")
            let ids = gids.compactMap { DownloadID(hex: $0) }
            #expect(await eventually(timeout: .seconds(20)) { ids.allSatisfy { service.download($0)?.status.isStopped == true } })
            let paths = ids.compactMap { service.download($0)?.filePath }
            #expect(paths == [service.rootPath + "/a.bin", service.rootPath + "/sub/b.bin"])
            let expected = Data(HaulServer.content(seed: 4).bytes(0..<200_000))
            for path in paths { #expect(FileManager.default.contents(atPath: path) == expected) }
            #expect(Self.result(rpc, "aria2.getUris", [.string(gids[0])]).array?.count == nil, "a finished download has no URI data")
            #expect(Self.error(rpc, "aria2.addMetalink", ["bm90IGJhc2U2NA!!"]) == "The metalink is not base64.")
            let entity = Data("<!DOCTYPE m [<!ENTITY x \"y\">]><metalink xmlns=\"urn:ietf:params:xml:ns:metalink\"/>".utf8).base64EncodedString()
            #expect(Self.error(rpc, "aria2.addMetalink", [.string(entity)])?.hasPrefix("The metalink is not usable") == true)
            #expect(service.statistics.waiting == 0 && service.statistics.active == 0, "a refused document adds nothing")
        }
    }

    /// A document's `<pieces>` stay with the download: a server whose bytes fail them fails the
    /// download (there is no whole-file hash to catch it at the end), the right bytes pass.
    @Test func addMetalinkKeepsThePiecesHashes() async throws {
        let server = try HaulServer()
        let size = 200_000, length = 65_536
        let content = HaulServer.content(seed: 4).bytes(0..<Int64(size))
        let hashes = stride(from: 0, to: size, by: length)
            .map { "<hash>" + Hex.encode(Digest.hash(.sha256, Array(content[$0..<min(size, $0 + length)]))) + "</hash>" }.joined()
        func document(seed: Int) -> JSONValue {
            let url = server.url("/bytes/\(size)/x?seed=\(seed)").replacingOccurrences(of: "&", with: "&amp;")
            let text = #"<?xml version="1.0"?><metalink xmlns="urn:ietf:params:xml:ns:metalink"><file name="p\#(seed).bin">"#
                + #"<size>\#(size)</size><pieces length="\#(length)" type="sha-256">\#(hashes)</pieces><url>\#(url)</url></file></metalink>"#
            return .string(Data(text.utf8).base64EncodedString())
        }
        try await Self.withRPC { rpc, service, _ in
            let ids = [4, 5].compactMap { Self.result(rpc, "aria2.addMetalink", [document(seed: $0)]).array?.first?.string }
                .compactMap { DownloadID(hex: $0) }
            try #require(ids.count == 2)
            #expect(service.download(ids[0])?.options.pieces?.digests.count == 4)
            #expect(await eventually(timeout: .seconds(20)) { ids.allSatisfy { service.download($0)?.status.isStopped == true } })
            #expect(service.download(ids[0])?.status == .complete)
            #expect(service.download(ids[1])?.status == .error, "the other bytes fail their pieces")
            #expect(service.download(ids[1])?.failure?.code == "checksumMismatch", "\(String(describing: service.download(ids[1])?.failure))")
        }
    }

    @Test func aCallNeverWaitsForATransfersNetwork() async throws {
        let server = try HaulServer()
        try await Self.withRPC { rpc, service, _ in
            let gid = Self.result(rpc, "aria2.addUri", [[.string(server.url("/silent"))]])
            #expect(Self.result(rpc, "aria2.tellStatus", [gid, ["status"]]) == ["status": "active"], "active at once")
            let deadline = ContinuousClock.now + .seconds(10)
            while server.requests.isEmpty && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
            let clock = ContinuousClock()
            let start = clock.now
            #expect(Self.result(rpc, "aria2.pause", [gid]) == gid, "the server never answers: the transfer waits in recv")
            #expect(Self.result(rpc, "aria2.remove", [gid]) == gid)
            // A call that waited for the transfer would wait out its 30 s header timeout.
            #expect(clock.now - start < .seconds(5), "took \(clock.now - start)")
            #expect(service.download(DownloadID(hex: gid.string!)!)?.status == .removed)
        }
    }
}

/// The shutdown requests the RPC made.
final class ShutdownLog: Sendable {
    let requests = SharedStateLock<[Bool]>([])
}
