import HaulCore

/// One TLS context per download, made on first use (plain HTTP never loads the trust store),
/// shared by its connections.
package final class TLSContextCache: Sendable {
    /// The settings every context of this cache is made with.
    package let options: TLSSettings
    private let context = SharedStateLock<TLSContext?>(nil)

    package init(options: TLSSettings) {
        self.options = options
    }

    package func get() throws(HTTPClientError) -> TLSContext {
        let result = context.withLock { context -> Result<TLSContext, HTTPClientError> in
            if let context { return .success(context) }
            do throws(HTTPClientError) {
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
