import Foundation
import HaulServer
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A `haul` process running in the background, for end-to-end tests that act while it runs
/// (Ctrl-C) and for every test that should not block a Swift concurrency thread while waiting.
///
/// Standard input is empty unless a file is given; standard output and error go to temporary
/// files (read by ``finish(timeout:)``), so a large output never blocks the child and stderr is
/// not a TTY.
final class HaulProcess: Sendable {
    private let process: Process
    private let outputFolder: URL
    private let exited: AsyncStream<Void>

    /// Starts `haul` with `arguments` in the working directory `directory`.
    ///
    /// - Parameters:
    ///   - environment: variables set (or replaced) in the child's environment.
    ///   - standardInput: a file the child reads as its standard input (empty when `nil`).
    /// - Throws: when the binary was not built or cannot be started.
    init(_ arguments: [String], in directory: URL, environment extra: [String: String] = [:],
         standardInput: URL? = nil) throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("haul-e2e-\(UUID().uuidString)")
        var environment = ProcessInfo.processInfo.environment
        environment["TERM"] = "xterm-256color"  // stderr is a file, so output must be plain anyway
        // The machine's proxies must not reach loopback tests; a test sets its own.
        for name in ["http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY", "no_proxy", "NO_PROXY"] {
            environment[name] = nil
        }
        environment.merge(extra) { $1 }
        let process = try HaulBinary.prepare(arguments, outputIn: folder, workingDirectory: directory, environment: environment)
        if let standardInput {
            process.standardInput = try FileHandle(forReadingFrom: standardInput)
        }
        let (stream, continuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        process.terminationHandler = { _ in
            continuation.yield()
            continuation.finish()
        }
        do {
            try process.run()
        } catch {
            try? FileManager.default.removeItem(at: folder)
            throw error
        }
        self.process = process
        self.outputFolder = folder
        self.exited = stream
    }

    /// Whether the process has not exited yet.
    var isRunning: Bool { process.isRunning }

    /// Sends SIGINT (Ctrl-C) to the process.
    func interrupt() {
        _ = kill(process.processIdentifier, SIGINT)
    }

    /// What the process wrote to standard error so far.
    var standardErrorSoFar: String {
        (try? String(contentsOf: outputFolder.appendingPathComponent("stderr"), encoding: .utf8)) ?? ""
    }

    /// Waits for the process to exit (terminating it, and recording an issue, after `timeout`)
    /// and returns its status and output.
    func finish(timeout: Duration = .seconds(60), sourceLocation: SourceLocation = #_sourceLocation) async throws -> HaulBinary.Outcome {
        let watchdog = Task { [process] in
            try? await Task.sleep(for: timeout)
            guard !Task.isCancelled, process.isRunning else { return false }
            process.terminate()
            return true
        }
        for await _ in exited {}
        watchdog.cancel()
        if await watchdog.value {
            Issue.record("haul did not exit within \(timeout); terminated", sourceLocation: sourceLocation)
        }
        defer { try? FileManager.default.removeItem(at: outputFolder) }
        let status = process.terminationReason == .uncaughtSignal ? 128 + process.terminationStatus : process.terminationStatus
        return HaulBinary.Outcome(
            status: status,
            standardOutput: try String(contentsOf: outputFolder.appendingPathComponent("stdout"), encoding: .utf8),
            standardError: try String(contentsOf: outputFolder.appendingPathComponent("stderr"), encoding: .utf8))
    }
}

/// Runs `haul` with `arguments` in `directory` to its end.
///
/// - Parameters:
///   - arguments: the command-line arguments, without the program name.
///   - directory: the working directory.
///   - timeout: how long the run may take before it is terminated (a test failure).
func haul(_ arguments: [String], in directory: URL, timeout: Duration = .seconds(60),
          sourceLocation: SourceLocation = #_sourceLocation) async throws -> HaulBinary.Outcome {
    try await HaulProcess(arguments, in: directory).finish(timeout: timeout, sourceLocation: sourceLocation)
}

extension HaulBinary.Outcome {
    /// The lines of standard output, without their newlines.
    var outputLines: [String] { Self.lines(standardOutput) }
    /// The lines of standard error, without their newlines.
    var errorLines: [String] { Self.lines(standardError) }

    /// Every standard output line parsed as a JSON object; records an issue for a line that is not one.
    func jsonEvents(sourceLocation: SourceLocation = #_sourceLocation) -> [[String: Any]] {
        outputLines.compactMap { line in
            let object = try? JSONSerialization.jsonObject(with: Data(line.utf8))
            guard let event = object as? [String: Any] else {
                Issue.record("stdout line is not a JSON object: \(line)", sourceLocation: sourceLocation)
                return nil
            }
            return event
        }
    }

    private static func lines(_ text: String) -> [String] {
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        if lines.last == "" { lines.removeLast() }
        return lines
    }
}

/// The names of the events, in order.
func eventNames(_ events: [[String: Any]]) -> [String] {
    events.map { $0["event"] as? String ?? "?" }
}

/// A JSON number as an integer (`nil` for `null`, absence, a string or a non-integer).
func jsonInteger(_ value: Any?) -> Int64? {
    guard let number = value as? NSNumber else { return nil }
    let integer = number.int64Value
    return Double(integer) == number.doubleValue ? integer : nil
}

/// Whether a JSON member is present and `null`.
func isJSONNull(_ value: Any?) -> Bool {
    value is NSNull
}

/// A string percent-encoded for a query value (everything but letters and digits).
func queryEncoded(_ text: String) -> String {
    text.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
}

/// The bytes `/bytes/N?seed=S` serves.
func served(_ count: Int, seed: UInt64 = 0) -> Data {
    Data(HaulServer.content(seed: seed).bytes(0..<Int64(count)))
}

/// The contents of a file, or `nil` when it cannot be read.
func fileContents(_ url: URL) -> Data? {
    try? Data(contentsOf: url)
}

/// A TCP port on 127.0.0.1 that is bound but never listens, so every connection to it is
/// refused; the port stays reserved (no other test can take it) until this value is released.
final class RefusingPort: Sendable {
    /// The port number.
    let port: Int
    private let descriptor: Int32

    /// Binds a socket to an ephemeral port of 127.0.0.1 without listening.
    init() throws {
        #if canImport(Glibc)
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let descriptor = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        try #require(descriptor >= 0, "socket() failed")
        var address = sockaddr_in()
        #if canImport(Darwin)
        address.sin_len = UInt8(MemoryLayout<sockaddr_in>.size)
        #endif
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                bind(descriptor, socketAddress, length) == 0 && getsockname(descriptor, socketAddress, &length) == 0
            }
        }
        guard bound else {
            close(descriptor)
            throw RefusingPortError()
        }
        self.descriptor = descriptor
        self.port = Int(UInt16(bigEndian: address.sin_port))
    }

    deinit {
        close(descriptor)
    }

    /// `http://127.0.0.1:PORT` followed by `path`.
    func url(_ path: String) -> String {
        "http://127.0.0.1:\(port)\(path)"
    }
}

/// The loopback port could not be bound.
struct RefusingPortError: Error {}
