import Foundation
import HaulDaemon
import Testing
import HaulJSON
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A `haul daemon` process for end-to-end tests: started on a free loopback port (read from its
/// log), its state and downloads in a folder, signalled and waited for.
final class DaemonProcess: Sendable {
    let process: Process
    let outputFolder: URL
    /// The folder holding `state.db`, its secret and `downloads/`.
    let folder: URL
    /// The port it listens on.
    let port: Int

    /// Starts `haul daemon --dir=FOLDER/downloads --state=FOLDER/state.db --listen=127.0.0.1:0`
    /// plus `arguments`, and waits until it listens.
    init(in folder: URL, _ arguments: [String] = [], environment extra: [String: String] = [:]) async throws {
        self.folder = folder
        outputFolder = FileManager.default.temporaryDirectory.appendingPathComponent("haul-daemon-\(UUID().uuidString)")
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_CONFIG_HOME"] = folder.appendingPathComponent("config").path   // never the user's daemon.conf
        environment.merge(extra) { $1 }
        let all = ["daemon", "--dir=\(folder.path)/downloads", "--state=\(folder.path)/state.db", "--listen=127.0.0.1:0"] + arguments
        process = try HaulBinary.prepare(all, outputIn: outputFolder, workingDirectory: folder, environment: environment)
        try process.run()
        var found: Int?
        let deadline = ContinuousClock.now + .seconds(20)
        while found == nil && ContinuousClock.now < deadline && process.isRunning {
            let text = Self.output(outputFolder)
            if let range = text.range(of: "listening on 127.0.0.1:") {
                found = Int(text[range.upperBound...].prefix { $0.isNumber })
            } else {
                try await Task.sleep(for: .milliseconds(20))
            }
        }
        guard let found else {
            process.terminate()
            throw DaemonTestError(description: "the daemon did not start: \(Self.output(outputFolder))")
        }
        port = found
    }

    /// The secret the daemon made beside its state file.
    var secret: String {
        (try? String(contentsOf: folder.appendingPathComponent("state.secret"), encoding: .utf8))?
            .trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
    }

    /// A client for the daemon.
    var client: DaemonClient {
        DaemonClient(url: "http://127.0.0.1:\(port)/jsonrpc", secret: secret)!
    }

    /// Calls `method` (the token added).
    @discardableResult
    func call(_ method: String, _ params: [JSONValue] = []) throws -> JSONValue {
        try client.call(method, params)
    }

    /// Sends `signal` to the process.
    func send(_ signal: Int32) {
        _ = kill(process.processIdentifier, signal)
    }

    /// What the process wrote so far (standard error, then standard output: `--json` logs there).
    var log: String { Self.output(outputFolder) }

    private static func output(_ folder: URL) -> String {
        ["stderr", "stdout"].map { (try? String(contentsOf: folder.appendingPathComponent($0), encoding: .utf8)) ?? "" }.joined()
    }

    /// Waits for the process to exit (killing it after `timeout`); its status (`128 + signal`
    /// when a signal ended it).
    func waitForExit(timeout: Duration = .seconds(20)) async -> Int32 {
        let deadline = ContinuousClock.now + timeout
        while process.isRunning && ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(20)) }
        if process.isRunning {
            Issue.record("the daemon did not exit within \(timeout)")
            send(SIGKILL)
            process.waitUntilExit()
        }
        return process.terminationReason == .uncaughtSignal ? 128 + process.terminationStatus : process.terminationStatus
    }

    deinit {
        if process.isRunning {
            _ = kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: outputFolder)
    }

    /// Every download the daemon lists (active, queue, results) as `gid -> status`.
    func statuses() throws -> [String: String] {
        var found: [String: String] = [:]
        let keys: JSONValue = ["gid", "status"]
        var entries = try call("aria2.tellActive", [keys]).array ?? []
        entries += try call("aria2.tellWaiting", [0, 1000, keys]).array ?? []
        entries += try call("aria2.tellStopped", [0, 1000, keys]).array ?? []
        for entry in entries {
            if let gid = entry.object?["gid"]?.string { found[gid] = entry.object?["status"]?.string }
        }
        return found
    }
}

struct DaemonTestError: Error, CustomStringConvertible {
    var description: String
}
