/// Drives one download: connect, follow redirects, name, transfer, verify, commit.
struct DownloadJob {
    let request: DownloadRequest
    let destination: Destination
    let configuration: Downloader.Configuration
    let cancellation: CancellationSignal
    let events: EventQueue

    func run() throws(DownloadError) -> DownloadResult {
        throw DownloadError(.notSupported, "the engine is not written yet")
    }
}
