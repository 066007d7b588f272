import Foundation
import HaulTestSupport

/// The outcome of one `/usr/bin/curl` run.
struct CurlResult {
    var exitCode: Int32
    var stdout: Data
    var stderr: String
}

/// Runs `/usr/bin/curl -sS` with `arguments` and no configuration file, to its end.
func curl(_ arguments: [String]) async throws -> CurlResult {
    let outcome = try await runChildProcess(URL(fileURLWithPath: "/usr/bin/curl"), ["-q", "-sS", "--max-time", "30"] + arguments)
    return CurlResult(exitCode: outcome.status, stdout: outcome.standardOutput, stderr: outcome.errorText)
}
