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

/// The bytes a resource serves.
func bytes(of resource: HaulServer.Resource) -> [UInt8] {
    resource.bytes(0..<resource.size)
}
