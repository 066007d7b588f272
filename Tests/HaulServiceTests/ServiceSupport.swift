import Foundation
import Haul
import HaulServer
import HaulService
import HaulTestSupport
import Testing

/// A service configuration for tests: root and state file in `dir`, short timeouts, no retries.
func serviceConfiguration(_ dir: URL, active: Int = 2, connections: Int = 2) -> DownloadService.Configuration {
    var engine = Downloader.Configuration()
    engine.connectTimeout = .seconds(5)
    engine.headerTimeout = .seconds(5)
    engine.stallTimeout = .seconds(5)
    engine.retry = RetryPolicy(maximumRetries: 0)
    engine.connectionsPerDownload = connections
    engine.maximumActiveDownloads = active
    return DownloadService.Configuration(root: dir.appendingPathComponent("downloads"),
                                         stateFile: dir.appendingPathComponent("state.db"), downloader: engine)
}

/// Polls `condition` every 10 ms until it holds; records an issue after `timeout`.
@discardableResult
func eventually(timeout: Duration = .seconds(15), sourceLocation: SourceLocation = #_sourceLocation,
                _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    while !condition() {
        guard ContinuousClock.now < deadline else {
            Issue.record("timed out", sourceLocation: sourceLocation)
            return false
        }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return true
}

/// The bytes a resource serves.
func bytes(of resource: HaulServer.Resource) -> [UInt8] {
    resource.bytes(0..<resource.size)
}
