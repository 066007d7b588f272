import Synchronization

/// One TLS context per download, made on first use (plain HTTP never loads the trust store),
/// shared by its connections.
final class TLSContextCache: Sendable {
    private let options: Downloader.TLSOptions
    private let context = Mutex<TLSContext?>(nil)

    init(options: Downloader.TLSOptions) {
        self.options = options
    }

    func get() throws(DownloadError) -> TLSContext {
        let result = context.withLock { context -> Result<TLSContext, DownloadError> in
            if let context { return .success(context) }
            do throws(DownloadError) {
                let made = try TLSContext(options: options)
                context = made
                return .success(made)
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }
}
