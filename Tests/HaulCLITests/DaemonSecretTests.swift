import Foundation
import HaulDaemon
import HaulTestSupport
import Testing
import HaulJSON
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `haul daemon`'s secret file: one that group or others may read is refused (exit 1, one line
/// naming `chmod 600`), given with `--secret-file` or made by an earlier run and reused; a URL
/// that holds the secret's text is logged with the secret redacted.
@Suite("haul daemon secret file", .throttled, .timeLimit(.minutes(2)))
struct DaemonSecretTests {
    @Test(arguments: [0o644, 0o640, 0o604, 0o660, 0o602])
    func aSecretFileOthersMayReadIsRefused(mode: Int) async throws {
        try await withTemporaryDirectory { (dir) async throws in
            let file = try Self.secretFile(in: dir, name: "given.secret", mode: mode)
            let run = try await haul(["daemon", "--dir=\(dir.path)/downloads", "--state=\(dir.path)/state.db",
                                      "--listen=127.0.0.1:0", "--secret-file=\(file)"], in: dir)
            #expect(run.status == 1)
            #expect(run.standardError == "haul: daemon: the secret file \(file) can be read or changed by group or others "
                        + "(mode \(String(mode, radix: 8))): chmod 600 \(file)\n")
            #expect(!FileManager.default.fileExists(atPath: dir.path + "/state.db"), "refused before the state file")
        }
    }

    @Test func theSecretFileMadeByAnEarlierRunIsRefusedWhenOthersMayReadIt() async throws {
        try await withTemporaryDirectory { (dir) async throws in
            let file = try Self.secretFile(in: dir, name: "state.secret", mode: 0o644)
            let run = try await haul(["daemon", "--dir=\(dir.path)/downloads", "--state=\(dir.path)/state.db",
                                      "--listen=127.0.0.1:0"], in: dir)
            #expect(run.status == 1)
            #expect(run.standardError.split(separator: "\n").count == 1, "\(run.standardError)")
            #expect(run.standardError.contains("chmod 600 \(file)"))
        }
    }

    @Test(arguments: [0o600, 0o400])
    func aPrivateSecretFileIsUsed(mode: Int) async throws {
        try await withTemporaryDirectory { (dir) async throws in
            let file = try Self.secretFile(in: dir, name: "given.secret", mode: mode)
            let daemon = try await DaemonProcess(in: dir, ["--secret-file=\(file)"])
            let client = try #require(DaemonClient(url: "http://127.0.0.1:\(daemon.port)/jsonrpc", secret: Self.secret))
            #expect(try client.call("aria2.getVersion").object?["version"] != nil)
            daemon.send(SIGTERM)
            #expect(await daemon.waitForExit() == 0)
        }
    }

    /// URLs whose path or query hold the secret, raw and percent-encoded: the log shows them
    /// with `REDACTED` in its place, in text and in `--json`.
    @Test(arguments: [false, true])
    func aURLHoldingTheSecretIsLoggedWithTheSecretRedacted(json: Bool) async throws {
        try await withTemporaryDirectory { (dir) async throws in
            let file = try Self.secretFile(in: dir, name: "given.secret", mode: 0o600)
            let daemon = try await DaemonProcess(in: dir, ["--secret-file=\(file)"] + (json ? ["--json"] : []))
            let client = try #require(DaemonClient(url: "http://127.0.0.1:\(daemon.port)/jsonrpc", secret: Self.secret))
            let encoded = Self.secret.unicodeScalars.map { "%" + String($0.value, radix: 16, uppercase: true) }.joined()
            let urls = ["http://127.0.0.1:1/\(Self.secret)/file.bin", "http://127.0.0.1:1/f.bin?q=\(Self.secret)",
                        "http://127.0.0.1:1/\(encoded).bin", "http://127.0.0.1:1/a.bin?x=%6e" + Self.secret.dropFirst()]
            for url in urls { _ = try client.call("aria2.addUri", [[.string(url)]]) }
            try await Self.waitFor(count: urls.count, of: json ? "\"event\":\"added\"" : " added ", in: daemon)
            daemon.send(SIGTERM)
            _ = await daemon.waitForExit()
            let log = daemon.log
            #expect(!log.contains(Self.secret), "\(log)")
            #expect(!log.contains(encoded))
            #expect(log.components(separatedBy: "REDACTED").count - 1 >= urls.count, "\(log)")
        }
    }

    static let secret = "nN7-s3cret-xyzzy-8Q"

    /// Writes the secret into `dir/name` with `mode`, whatever the umask.
    static func secretFile(in dir: URL, name: String, mode: Int) throws -> String {
        let path = dir.appendingPathComponent(name).path
        try Data((secret + "\n").utf8).write(to: URL(fileURLWithPath: path))
        #expect(chmod(path, mode_t(mode)) == 0)
        return path
    }

    /// Waits until the daemon's log has `count` lines holding `marker`.
    static func waitFor(count: Int, of marker: String, in daemon: DaemonProcess) async throws {
        let deadline = ContinuousClock.now + .seconds(20)
        while daemon.log.components(separatedBy: marker).count - 1 < count {
            guard ContinuousClock.now < deadline else {
                Issue.record("the log did not show \(count) failures: \(daemon.log)")
                return
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }
}
