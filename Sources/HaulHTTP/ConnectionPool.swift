import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import HaulCore

/// Idle keep-alive connections, by route (see ``ConnectionRoute``: the origin, or the proxy and
/// what went through it), so the next request along that route skips the connect, the proxy's
/// handshake and the TLS handshake.
///
/// A connection goes back only after its whole response was read with nothing left over, when
/// both sides allow keep-alive (see ``ResponseHead/allowsReuse``). A connection parked longer than
/// ``idleLifetime``, or one the server closed or wrote to meanwhile, is never handed out. The
/// first request on a reused connection that fails before any byte of its answer arrives is sent
/// again on a new connection (the server may close an idle connection at any moment). A list of
/// small files from one server, 16 at once, then needs 16 connections, not one per file.
package final class ConnectionPool: Sendable {
    /// How long an idle connection is kept (servers close theirs after 5 s (Apache) to 75 s (nginx)).
    package let idleLifetime: Duration
    /// The most idle connections kept per origin.
    package let maximumIdlePerOrigin: Int

    /// The origins the downloads sharing this pool gave up connecting to.
    package let unreachable = UnreachableHosts()

    private let idle = SharedStateLock<[ConnectionRoute: [Entry]]>([:])

    /// A connection only the pool refers to while it is parked.
    private struct Entry: @unchecked Sendable {
        let connection: Connection
        let since: ContinuousClock.Instant
    }

    package init(idleLifetime: Duration = .seconds(4), maximumIdlePerOrigin: Int = 32) {
        self.idleLifetime = idleLifetime
        self.maximumIdlePerOrigin = maximumIdlePerOrigin
    }

    /// An idle connection along `route` that still looks open, moved to `cancellation`; `nil`
    /// when there is none.
    package func take(for route: ConnectionRoute, cancellation: CancellationSignal) -> Connection? {
        let key = route
        while true {
            let entry = idle.withLock { idle -> Entry? in idle[key]?.popLast() }
            guard let entry else { return nil }
            guard ContinuousClock.now - entry.since < idleLifetime, entry.connection.looksIdleAndOpen else {
                entry.connection.close()
                continue
            }
            entry.connection.rebind(to: cancellation)
            return entry.connection
        }
    }

    /// Parks `connection` under its route for a later request, or closes it when the route
    /// already has ``maximumIdlePerOrigin`` idle connections.
    package func put(_ connection: Connection) {
        connection.detach()
        let key = connection.route
        let now = ContinuousClock.now
        let evicted = idle.withLock { idle -> [Entry] in
            var list = idle[key, default: []]
            // Drop the expired ones while here (oldest first).
            let expired = list.prefix { now - $0.since >= idleLifetime }
            list.removeFirst(expired.count)
            var evicted = Array(expired)
            if list.count < maximumIdlePerOrigin {
                list.append(Entry(connection: connection, since: now))
            } else {
                evicted.append(Entry(connection: connection, since: now))
            }
            idle[key] = list
            return evicted
        }
        for entry in evicted { entry.connection.close() }
    }

    /// Closes every idle connection.
    package func closeAll() {
        let all = idle.withLock { idle -> [Entry] in
            defer { idle = [:] }
            return idle.values.flatMap { $0 }
        }
        for entry in all { entry.connection.close() }
    }

    deinit { closeAll() }
}

extension ResponseHead {
    /// Whether the connection that carried this response may carry another request: HTTP/1.1
    /// without `close` in any `Connection` field (HTTP/1.0 keep-alive is not used).
    package var allowsReuse: Bool {
        minorVersion >= 1 && !headers.list("Connection", contains: "close")
    }
}
