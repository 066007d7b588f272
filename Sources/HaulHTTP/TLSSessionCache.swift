import CHaulTLS
import HaulCore

/// The TLS sessions of one ``TLSContext``: a new connection to a target resumes the newest
/// session of an earlier one (no certificate chain sent or verified, one round trip fewer
/// before TLS 1.3), so a segmented download's extra connections, its reconnects and the next
/// download from the same host skip the full handshake.
///
/// Keeps the newest session per ``Target``, at most ``capacity`` targets (the one stored
/// longest ago goes first). A session is offered only to the target it came from: the name it
/// was verified against and sent as SNI, the port and the proxy route. Each context has its own
/// cache, so a session never crosses TLS settings (trust store, verification off).
///
/// The cache holds copies that no connection uses: OpenSSL marks a connection's own session as
/// not resumable when the connection ends without `close_notify`, and would write to a session
/// other threads are reading. Each connection resumes from a copy of its own
/// (``TLSSession/copy()``), and each new session is copied in.
package final class TLSSessionCache: Sendable {
    /// Where a connection's TLS session leads.
    package struct Target: Hashable, Sendable {
        /// The host name (or IP literal) the peer is verified against and, for a name, the SNI.
        package var host: String
        package var port: Int
        /// The proxy the session runs through (`scheme://host:port`), `nil` when it runs over
        /// its own TCP connection (direct, or the proxy's own session).
        package var via: String?

        package init(host: String, port: Int, via: String? = nil) {
            self.host = host
            self.port = port
            self.via = via
        }
    }

    private struct Entry {
        var session: TLSSession
        var stamp: UInt64
    }

    private struct State {
        var entries: [Target: Entry] = [:]
        var stored: UInt64 = 0
    }

    /// The most targets kept (a downloader rarely talks to more hosts over TLS at once).
    package let capacity: Int
    private let state = SharedStateLock(State())

    package init(capacity: Int = 64) {
        precondition(capacity > 0)
        self.capacity = capacity
    }

    /// The newest session of `target`, if one is kept.
    package func session(for target: Target) -> TLSSession? {
        state.withLock { $0.entries[target]?.session }
    }

    /// Keeps `session` as `target`'s newest, dropping the target stored longest ago when full.
    package func store(_ session: TLSSession, for target: Target) {
        // Dropped sessions are freed after the lock.
        let dropped = state.withLock { state -> [TLSSession] in
            state.stored += 1
            let replaced = state.entries.updateValue(Entry(session: session, stamp: state.stored), forKey: target)
            var dropped = replaced.map { [$0.session] } ?? []
            if state.entries.count > capacity, let oldest = state.entries.min(by: { $0.value.stamp < $1.value.stamp }) {
                dropped.append(oldest.value.session)
                state.entries[oldest.key] = nil
            }
            return dropped
        }
        _ = dropped
    }

    /// Forgets `target`'s session (a handshake that offered it failed).
    package func remove(_ target: Target) {
        let dropped = state.withLock { $0.entries.removeValue(forKey: target) }
        _ = dropped
    }

    /// The number of targets with a session.
    package var count: Int {
        state.withLock { $0.entries.count }
    }
}

/// One reference to an OpenSSL `SSL_SESSION`, released with the last Swift reference.
///
/// Unchecked Sendable: the session is only read once made (copied, or handed to
/// `SSL_set_session`, which takes a reference of its own); no connection uses it as its own
/// (see ``TLSSessionCache``), so OpenSSL never writes to it.
package final class TLSSession: @unchecked Sendable {
    private let pointer: OpaquePointer

    /// Takes over one reference to `pointer`.
    private init(owning pointer: OpaquePointer) {
        self.pointer = pointer
    }

    /// A copy of a connection's new session, or `nil` when it cannot be resumed (or copied).
    package static func copy(of session: OpaquePointer) -> TLSSession? {
        guard SSL_SESSION_is_resumable(session) == 1, let copy = SSL_SESSION_dup(session) else { return nil }
        return TLSSession(owning: copy)
    }

    /// Sets a copy of the session for `ssl` to offer in its handshake.
    ///
    /// - Returns: whether it was set.
    package func offer(to ssl: OpaquePointer) -> Bool {
        guard let copy = SSL_SESSION_dup(pointer) else { return false }
        defer { SSL_SESSION_free(copy) }   // `ssl` holds its own reference
        return SSL_set_session(ssl, copy) == 1
    }

    deinit {
        SSL_SESSION_free(pointer)
    }
}

/// What a client connection's new sessions are stored under: its context's cache and target.
///
/// The connection keeps it as long as its `SSL`, whose ex_data points at it (unretained) for
/// the new-session callback, which runs only inside the connection's own OpenSSL calls.
package final class TLSSessionSlot {
    package let cache: TLSSessionCache
    package let target: TLSSessionCache.Target

    package init(cache: TLSSessionCache, target: TLSSessionCache.Target) {
        self.cache = cache
        self.target = target
    }

    /// The ex_data index of the slot (`nil` if OpenSSL could not make one: no resumption then).
    package static let index: Int32? = {
        let index = haul_ssl_session_slot_index()
        return index < 0 ? nil : index
    }()

    /// Points `ssl`'s ex_data at the slot. Returns `false` when there is no index.
    package func attach(to ssl: OpaquePointer) -> Bool {
        guard let index = Self.index else { return false }
        return SSL_set_ex_data(ssl, index, Unmanaged.passUnretained(self).toOpaque()) == 1
    }

    /// OpenSSL's new-session callback for every context: copies a resumable session into the
    /// cache of the connection's slot. Returns 0: OpenSSL keeps and frees its own reference.
    package static let newSessionCallback: @convention(c) (OpaquePointer?, OpaquePointer?) -> Int32 = { ssl, session in
        guard let ssl, let session, let index = TLSSessionSlot.index, let raw = SSL_get_ex_data(ssl, index),
              let copy = TLSSession.copy(of: session) else { return 0 }
        let slot = Unmanaged<TLSSessionSlot>.fromOpaque(raw).takeUnretainedValue()
        slot.cache.store(copy, for: slot.target)
        return 0
    }
}
