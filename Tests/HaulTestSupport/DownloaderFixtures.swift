import Foundation
import Haul
import HaulServer

/// A downloader with short timeouts and no retries, so failure tests end fast.
package func testDownloader(_ adjust: (inout Downloader.Configuration) -> Void = { _ in }) -> Downloader {
    Downloader(configuration: testConfiguration(adjust))
}

/// The configuration of ``testDownloader(_:)``.
package func testConfiguration(_ adjust: (inout Downloader.Configuration) -> Void = { _ in }) -> Downloader.Configuration {
    var configuration = Downloader.Configuration()
    configuration.connectTimeout = .seconds(5)
    configuration.headerTimeout = .seconds(5)
    configuration.stallTimeout = .seconds(5)
    configuration.retry = RetryPolicy(maximumRetries: 0)
    configuration.bufferSize = 256 * 1024
    configuration.proxy = .none   // the machine's proxy variables must not reach loopback tests
    adjust(&configuration)
    return configuration
}

/// The URL of `path` on `server`.
package func url(_ server: HaulServer, _ path: String) -> URL {
    URL(string: server.url(path))!
}

/// The bytes the server's `/bytes/N` route serves for `seed`.
package func expectedContent(_ count: Int, seed: UInt64 = 0) -> [UInt8] {
    HaulServer.content(seed: seed).bytes(0..<Int64(count))
}

/// The file's bytes.
package func contents(_ url: URL) throws -> [UInt8] {
    [UInt8](try Data(contentsOf: url))
}
