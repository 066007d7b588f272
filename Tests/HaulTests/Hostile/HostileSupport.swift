import Haul
import HaulTestSupport

/// A downloader for the hostile tests: one connection, short timeouts, quick retries.
func hostileDownloader(retries: Int = 3, _ adjust: (inout Downloader.Configuration) -> Void = { _ in }) -> Downloader {
    testDownloader { configuration in
        configuration.connectionsPerDownload = 1
        configuration.retry = RetryPolicy(maximumRetries: retries, initialDelay: .milliseconds(20), maximumDelay: .milliseconds(100))
        adjust(&configuration)
    }
}
