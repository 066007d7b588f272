import Foundation

/// A child process that ran to its end: how it ended and what it wrote.
public struct ChildProcessOutcome: Sendable {
    /// The exit status, or `128 + signal` when a signal ended it.
    public var status: Int32
    /// Everything written to standard output.
    public var standardOutput: Data
    /// Everything written to standard error.
    public var standardError: Data

    /// Standard error as UTF-8 text.
    public var errorText: String { String(decoding: standardError, as: UTF8.self) }
}

/// Runs `executable` with `arguments` to its end and returns how it ended.
///
/// The caller's task is suspended while the child runs, holding no thread: tests run side by
/// side on a cooperative pool of one thread per core, and a test blocked in `waitUntilExit`
/// would hold one of them. Standard input is empty; standard output and error go to temporary
/// files, so a large output never blocks the child.
///
/// - Parameters:
///   - environment: the child's whole environment (the test process's when `nil`).
///   - workingDirectory: the child's working directory (the test process's when `nil`).
///   - timeout: how long the child may run before it is terminated (its status then says so).
/// - Throws: when the child cannot be started or its output cannot be read back.
public func runChildProcess(_ executable: URL, _ arguments: [String], environment: [String: String]? = nil,
                            workingDirectory: URL? = nil, timeout: Duration = .seconds(60)) async throws -> ChildProcessOutcome {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("haul-child-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let outURL = folder.appendingPathComponent("stdout"), errURL = folder.appendingPathComponent("stderr")
    _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
    _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)

    let process = Process()
    process.executableURL = executable
    process.arguments = arguments
    if let environment { process.environment = environment }
    if let workingDirectory { process.currentDirectoryURL = workingDirectory }
    process.standardInput = FileHandle.nullDevice
    let out = try FileHandle(forWritingTo: outURL), err = try FileHandle(forWritingTo: errURL)
    defer { try? out.close(); try? err.close() }
    process.standardOutput = out
    process.standardError = err
    let (exited, continuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
    process.terminationHandler = { _ in
        continuation.yield()
        continuation.finish()
    }
    try process.run()
    let watchdog = Task { [process] in
        try? await Task.sleep(for: timeout)
        if !Task.isCancelled, process.isRunning { process.terminate() }
    }
    for await _ in exited {}
    watchdog.cancel()
    let status = process.terminationReason == .uncaughtSignal ? 128 + process.terminationStatus : process.terminationStatus
    return ChildProcessOutcome(status: status, standardOutput: try Data(contentsOf: outURL), standardError: try Data(contentsOf: errURL))
}

/// Runs `body` on a thread of its own and returns what it returns, the caller's task suspended
/// meanwhile: CPU-heavy test work (hashing large buffers, saving and loading a huge record)
/// then holds no thread of the cooperative pool (one per core), which the tests running beside
/// it need. `body` must not record issues (no `#expect`): it runs outside the test's task.
public func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread { continuation.resume(with: Result { try body() }) }
        thread.stackSize = 8 << 20
        thread.start()
    }
}
