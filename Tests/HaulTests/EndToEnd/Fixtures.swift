import Foundation
import Haul
import HaulServer
import HaulTestSupport
import Testing

/// A downloader with short timeouts and no retries, so failure tests end fast.
func testDownloader(_ adjust: (inout Downloader.Configuration) -> Void = { _ in }) -> Downloader {
    Downloader(configuration: testConfiguration(adjust))
}

/// The configuration of ``testDownloader(_:)``.
func testConfiguration(_ adjust: (inout Downloader.Configuration) -> Void = { _ in }) -> Downloader.Configuration {
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
func url(_ server: HaulServer, _ path: String) -> URL {
    URL(string: server.url(path))!
}

/// Downloads and returns the error the download ended with (fails the test if it succeeded).
func expectFailure(_ downloader: Downloader, _ request: DownloadRequest, to destination: Destination,
                   sourceLocation: SourceLocation = #_sourceLocation) async -> DownloadError? {
    do {
        let result = try await downloader.file(from: request, to: destination)
        Issue.record("expected a failure, got \(result.fileURL.path)", sourceLocation: sourceLocation)
        return nil
    } catch {
        return error
    }
}

/// The bytes the server's `/bytes/N` route serves for `seed`.
func expectedContent(_ count: Int, seed: UInt64 = 0) -> [UInt8] {
    HaulServer.content(seed: seed).bytes(0..<Int64(count))
}

/// The file's bytes.
func contents(_ url: URL) throws -> [UInt8] {
    [UInt8](try Data(contentsOf: url))
}
