import Foundation

/// The outcome of one `/usr/bin/curl` run.
struct CurlResult {
    var exitCode: Int32
    var stdout: Data
    var stderr: String
}

/// Runs `/usr/bin/curl -sS` with `arguments` and no configuration file; waits for it.
func curl(_ arguments: [String]) throws -> CurlResult {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
    process.arguments = ["-q", "-sS", "--max-time", "30"] + arguments
    let output = Pipe(), errors = Pipe()
    process.standardOutput = output
    process.standardError = errors
    process.standardInput = FileHandle.nullDevice
    try process.run()
    // stderr is small; reading stdout to its end first cannot deadlock on it in practice.
    let stdout = output.fileHandleForReading.readDataToEndOfFile()
    let stderr = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    return CurlResult(exitCode: process.terminationStatus, stdout: stdout, stderr: stderr)
}
