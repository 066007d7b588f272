import CHaulSys
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A flag that wakes threads blocked in `poll` or in a blocking `recv`.
///
/// Waits that use `poll` include ``pollDescriptor``; connected sockets register themselves so
/// that ``cancel()`` shuts them down, which ends a blocked `recv`/`send`/TLS call at once.
/// Nothing busy-polls.
///
/// Its wake-up descriptor is made on first use; when the system has none to give,
/// ``pollDescriptor`` throws (the wait that wanted it fails with a typed error) and ``sleep(for:)``
/// looks at the flag every 100 ms instead.
package final class CancellationSignal: Sendable {
    private struct State {
        var cancelled = false
        var sockets: [Int: Int32] = [:]
        var children: [Int: CancellationSignal] = [:]
        var nextToken = 0
    }
    private let state = SharedStateLock(State())
    /// `state.cancelled`, readable without the lock: ``isCancelled`` is asked in every read and wait loop.
    private let flag = Atomic<Bool>(false)
    private let wakeup: WakeupDescriptor
    /// The descriptor to include in `poll` (readable once cancelled).
    ///
    /// - Throws: ``ResourceError`` (`.descriptor`) when it could not be made.
    package var pollDescriptor: Int32 {
        get throws(ResourceError) { try wakeup.pollDescriptor }
    }

    /// - Parameter wakeup: what wakes pollers (tests give one that cannot be made).
    package init(wakeup: WakeupDescriptor = WakeupDescriptor()) {
        self.wakeup = wakeup
    }

    /// Whether ``cancel()`` was called.
    package var isCancelled: Bool { flag.load(ordering: .acquiring) }

    /// Sets the flag, shuts down every registered socket, cancels every child and wakes every
    /// poller. Idempotent.
    package func cancel() {
        flag.store(true, ordering: .releasing)
        let children = state.withLock { state -> [CancellationSignal] in
            guard !state.cancelled else { return [] }
            state.cancelled = true
            for fd in state.sockets.values { shutdown(fd, Int32(SHUT_RDWR)) }
            wakeup.signal()
            defer { state.children = [:] }
            return Array(state.children.values)
        }
        for child in children { child.cancel() }
    }

    /// Makes `child` cancelled whenever this signal is (at once when it already is); the child's
    /// own ``cancel()`` does not reach back. Returns a token for ``removeChild(_:)``.
    package func addChild(_ child: CancellationSignal) -> Int? {
        let token = state.withLock { state -> Int? in
            guard !state.cancelled else { return nil }
            state.nextToken += 1
            state.children[state.nextToken] = child
            return state.nextToken
        }
        if token == nil { child.cancel() }
        return token
    }

    /// Forgets a child added with ``addChild(_:)``.
    package func removeChild(_ token: Int?) {
        guard let token else { return }
        _ = state.withLock { state in state.children.removeValue(forKey: token) }
    }

    /// Registers a socket to shut down on cancellation. Returns `nil` when already cancelled.
    ///
    /// The socket must be unregistered before it is closed (so a reused descriptor is never shut down).
    package func register(socket: Int32) -> Int? {
        state.withLock { state in
            guard !state.cancelled else { return nil }
            state.nextToken += 1
            state.sockets[state.nextToken] = socket
            return state.nextToken
        }
    }

    /// Forgets a socket registered with ``register(socket:)``.
    package func unregister(_ token: Int) {
        _ = state.withLock { state in state.sockets.removeValue(forKey: token) }
    }

    /// Sleeps for `duration` unless cancelled first. Returns `false` when cancelled.
    ///
    /// Without a wake-up descriptor (none could be made) it sleeps in steps of 100 ms, so a
    /// cancellation is noticed that late at most.
    package func sleep(for duration: Duration) -> Bool {
        let deadline = ContinuousClock.now + duration
        let descriptor = try? pollDescriptor
        var fds = [pollfd(fd: descriptor ?? -1, events: Int16(POLLIN), revents: 0)]   // poll skips -1
        while !isCancelled {
            let ms = (deadline - ContinuousClock.now).milliseconds
            if ms <= 0 { return true }
            _ = poll(&fds, 1, Int32(clamping: descriptor == nil ? min(ms, 100) : ms))
        }
        return false
    }
}
