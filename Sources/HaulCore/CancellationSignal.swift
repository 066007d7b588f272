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
package final class CancellationSignal: Sendable {
    private struct State {
        var cancelled = false
        var sockets: [Int: Int32] = [:]
        var children: [Int: CancellationSignal] = [:]
        var nextToken = 0
    }
    private let state = SharedStateLock(State())
    private let flag = Atomic<Bool>(false)
    private let wakeup = WakeupDescriptor()
    /// The descriptor to include in `poll` (readable once cancelled).
    package var pollDescriptor: Int32 { wakeup.pollDescriptor }

    package init() {}

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
    package func sleep(for duration: Duration) -> Bool {
        let deadline = ContinuousClock.now + duration
        var fds = [pollfd(fd: pollDescriptor, events: Int16(POLLIN), revents: 0)]
        while !isCancelled {
            let ms = (deadline - ContinuousClock.now).milliseconds
            if ms <= 0 { return true }
            _ = poll(&fds, 1, Int32(clamping: ms))
        }
        return false
    }
}
