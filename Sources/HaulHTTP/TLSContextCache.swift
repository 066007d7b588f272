import HaulCore

/// One TLS context for one set of settings, made on first use (plain HTTP never loads the trust
/// store) and shared by every connection that uses those settings.
///
/// The context (its trust store read from disk) is made outside the lock: two first users may
/// both make one, and the second is dropped, but no caller waits behind another's file reads.
package final class TLSContextCache: Sendable {
    /// The settings every context of this cache is made with.
    package let options: TLSSettings
    private let context = SharedStateLock<TLSContext?>(nil)

    package init(options: TLSSettings) {
        self.options = options
    }

    package func get() throws(HTTPClientError) -> TLSContext {
        if let made = context.withLock({ $0 }) { return made }
        let made = try TLSContext(options: options)
        return context.withLock { context in
            if let context { return context }
            context = made
            return made
        }
    }
}

/// The TLS contexts of one downloader, one per set of settings (the servers', each proxy's).
package final class TLSContexts: Sendable {
    private let caches = SharedStateLock<[TLSSettings: TLSContextCache]>([:])

    package init() {}

    /// The cache of the contexts made with `settings`.
    package func cache(for settings: TLSSettings) -> TLSContextCache {
        caches.withLock { caches in
            if let cache = caches[settings] { return cache }
            let cache = TLSContextCache(options: settings)
            caches[settings] = cache
            return cache
        }
    }
}
