import Foundation
import HaulServer
import HaulTestSupport
import Testing
import HaulJSON

/// `haul daemon --on-complete/--on-error` as a process: the documented example that files a
/// finished download runs, a failure reaches its hook with the error, and no call sets a hook.
@Suite(.throttled) struct DaemonHooksProcessTests {
    static func script(_ folder: URL, _ name: String, _ body: String) throws -> String {
        let url = folder.appendingPathComponent(name)
        try Data("#!/bin/sh\n\(body)\n".utf8).write(to: url)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: url.path)
        return url.path
    }

    @Test func theExampleHookMovesAFinishedFileAndAFailureReachesItsHook() async throws {
        let server = try HaulServer()
        server.setResource("/file.bin", HaulServer.Resource(size: 50_000, seed: 3, etag: "\"f\""))
        try await withTemporaryDirectory { folder in
            let done = folder.appendingPathComponent("done")
            // The example of docs/DAEMON.md: file the finished download, keep a line per failure.
            let complete = try Self.script(folder, "file-it", "mkdir -p \"$DONE\" && mv -- \"$HAUL_PATH\" \"$DONE/\" && echo \"filed $1\"")
            let failed = try Self.script(folder, "note-failure",
                                         "printf '%s %s %s %s\\n' \"$1\" \"$HAUL_ERROR_CODE\" \"$HAUL_HTTP_STATUS\" \"$HAUL_URL\" >> \"$DONE.failures\"")
            let daemon = try await DaemonProcess(in: folder, ["--on-complete=\(complete)", "--on-error=\(failed)"],
                                                 environment: ["DONE": done.path])
            let gid = try #require(daemon.call("aria2.addUri", [[.string(server.url("/file.bin"))]]).string)
            let moved = done.appendingPathComponent("file.bin")
            #expect(await eventually { FileManager.default.fileExists(atPath: moved.path) })
            #expect(try Data(contentsOf: moved) == Data(HaulServer.content(seed: 3).bytes(0..<50_000)))
            #expect(await eventually { daemon.log.contains("on-complete for \(gid): filed \(gid)") })
            let missing = try #require(daemon.call("aria2.addUri", [[.string(server.url("/missing.bin?token=s3cret"))]]).string)
            #expect(await eventually { (try? String(contentsOfFile: done.path + ".failures", encoding: .utf8)) != nil })
            let line = try String(contentsOfFile: done.path + ".failures", encoding: .utf8)
            #expect(line.hasPrefix("\(missing) httpStatus 404 http://127.0.0.1:"))
            #expect(!line.contains("s3cret"), "the URL's token is redacted: \(line)")
            #expect(throws: (any Error).self) {
                try daemon.call("aria2.changeGlobalOption", [["on-download-complete": .string("/bin/sh")]])
            }
            daemon.send(SIGTERM)
            #expect(await daemon.waitForExit() == 0)
        }
    }

    @Test func aHookThatIsNotAProgramStopsTheDaemonAtStart() async throws {
        let outcome = try await HaulBinary.run(["daemon", "--dir=downloads", "--state=state.db", "--on-complete=no-such-hook-program",
                                                "--listen=127.0.0.1:0"])
        #expect(outcome.status == 2)
        #expect(outcome.standardError.hasPrefix("haul: invalid value 'no-such-hook-program' for --on-complete: not an executable file in PATH\n"))
    }
}
