import HaulCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension DaemonServer {
    /// The connections the loop holds, by socket; only the loop's thread touches it.
    struct Held {
        var connections: [Int32: ServerConnection] = [:]
        /// The connections whose calls wait for their turn, first come first, by budget.
        var turns: [String: [Int32]] = [:]
        /// When a failed `accept` (no descriptor left) lets the listener be polled again.
        var listenerRestsUntil: ContinuousClock.Instant?
    }

    /// The event loop: waits in one `poll` for the listener, the wake-up descriptor and every
    /// held connection (and each WebSocket's outbox), until ``stop()``.
    func runLoop() {
        var held = Held()
        while true {
            let (back, stopped) = state.withLock { state in
                defer { state.handedBack = [] }
                return (state.handedBack, state.stopped)
            }
            for connection in back {
                held.connections[connection.fd] = connection
                if case .awaitingTurn = connection.phase {
                    held.turns[AuthThrottle.budgetKey(for: connection.peer), default: []].append(connection.fd)
                }
            }
            if stopped { return closeAll(held) }
            let limits = self.limits(held)
            let next = [passDeadlines(&held, limits), admitTurns(&held)].compactMap { $0 }.min()
            let (fds, owners) = pollSet(held)
            var polled = fds
            let ready = poll(&polled, nfds_t(polled.count), Self.milliseconds(until: next))
            if ready < 0 && errno != EINTR { sleep(until: .now + .milliseconds(10)) }
            guard ready > 0 else { continue }
            if polled[0].revents != 0 { wakeup.drain() }
            for index in polled.indices.dropFirst() where polled[index].revents != 0 {
                if polled[index].fd == listener { acceptAll(&held); continue }
                let fd = owners[index]
                guard var connection = held.connections[fd] else { continue }
                var action = ServerConnection.Action.serve   // a WebSocket's outbox has notifications
                var grown = false
                if polled[index].fd == fd {
                    guard let bytes = DaemonSocket.readAvailable(fd) else { continue }
                    action = connection.received(bytes, now: .now, limits: limits)
                    grown = connection.received.count > 64 << 10
                }
                held.connections[fd] = connection
                perform(action, on: fd, &held)
                if grown { keepWithinBufferBudget(&held) }
            }
        }
    }

    /// The descriptors to poll (the wake-up first) and, for each, the connection it belongs to.
    private func pollSet(_ held: Held) -> ([pollfd], [Int32]) {
        // Both descriptors were made before they got here (``start()``, the WebSocket upgrade).
        var fds = [pollfd(fd: (try? wakeup.pollDescriptor) ?? -1, events: Int16(POLLIN), revents: 0)]
        var owners: [Int32] = [-1]
        let full = held.listenerRestsUntil.map { $0 > .now } ?? false
        if !full {
            fds.append(pollfd(fd: listener, events: Int16(POLLIN), revents: 0))
            owners.append(listener)
        }
        for (fd, connection) in held.connections {
            fds.append(pollfd(fd: fd, events: Int16(POLLIN), revents: 0))
            owners.append(fd)
            if case .webSocket = connection.phase, let webSocket = connection.webSocket {
                fds.append(pollfd(fd: (try? webSocket.subscriber.wakeup.pollDescriptor) ?? -1, events: Int16(POLLIN), revents: 0))
                owners.append(fd)
            }
        }
        return (fds, owners)
    }

    /// Acts on every deadline that passed; returns the nearest one left.
    private func passDeadlines(_ held: inout Held, _ limits: ServerConnection.Limits) -> ContinuousClock.Instant? {
        let now = ContinuousClock.now
        if let rest = held.listenerRestsUntil, rest <= now { held.listenerRestsUntil = nil }
        var next = held.listenerRestsUntil
        for fd in Array(held.connections.keys) {
            guard var connection = held.connections[fd] else { continue }
            let action = connection.deadlinePassed(now: now, limits: limits)
            held.connections[fd] = connection
            perform(action, on: fd, &held)
            if let left = held.connections[fd] { next = min(next ?? .now + .seconds(3600), left.deadline(limits)) }
        }
        return next
    }

    /// Hands the calls whose turn has come to the workers; returns when the next turn comes.
    private func admitTurns(_ held: inout Held) -> ContinuousClock.Instant? {
        var next: ContinuousClock.Instant?
        for (key, queue) in held.turns {
            var waiting = queue[...]
            while let fd = waiting.first {
                guard var connection = held.connections[fd], case .awaitingTurn = connection.phase else {
                    waiting.removeFirst()   // gone, or closed
                    continue
                }
                guard throttle.admit(connection.peer) else {
                    next = min(next ?? .now + .seconds(3600), throttle.admissionTime(for: connection.peer) ?? .now)
                    break
                }
                waiting.removeFirst()
                connection.admitted = true
                held.connections[fd] = nil
                serve(connection)
            }
            held.turns[key] = waiting.isEmpty ? nil : Array(waiting)
        }
        return next
    }

    /// Does what a connection's event asked for.
    private func perform(_ action: ServerConnection.Action, on fd: Int32, _ held: inout Held) {
        switch action {
        case .wait:
            return
        case .serve:
            if let connection = held.connections.removeValue(forKey: fd) { serve(connection) }
        case .ping:
            if !DaemonSocket.sendWithoutWaiting(fd, WebSocketFrame.encode(.ping, [])) { close(fd, &held, farewell: []) }
        case .close(let farewell):
            close(fd, &held, farewell: farewell)
        }
    }

    private func close(_ fd: Int32, _ held: inout Held, farewell: [UInt8]) {
        guard let connection = held.connections.removeValue(forKey: fd) else { return }
        if !farewell.isEmpty { _ = DaemonSocket.sendWithoutWaiting(fd, farewell) }
        discard(connection)
    }

    /// Accepts what is waiting on the listener, closing the longest waiting connection when
    /// the server is full or out of descriptors.
    private func acceptAll(_ held: inout Held) {
        for _ in 0..<64 {
            switch DaemonSocket.accepting(listener) {
            case .wouldBlock:
                return
            case .outOfDescriptors:
                guard evictLongestWaiting(&held) else {
                    held.listenerRestsUntil = .now + .milliseconds(50)
                    return
                }
            case .accepted(let fd, let peer):
                let count = state.withLock { state in
                    state.open.insert(fd)
                    return state.open.count
                }
                if count > configuration.maximumConnections, !evictLongestWaiting(&held) {
                    _ = DaemonSocket.sendWithoutWaiting(fd, HTTPResponse.text(503, "too many connections").serialized(keepAlive: false))
                    discard(ServerConnection(fd: fd, peer: peer, accepted: .now))
                    continue
                }
                held.connections[fd] = ServerConnection(fd: fd, peer: peer, accepted: .now)
            }
        }
    }

    /// Closes the connections holding the most unanswered bytes (not authenticated ones) while
    /// all they hold is over ``Configuration/maximumBufferedBytes``.
    private func keepWithinBufferBudget(_ held: inout Held) {
        var total = held.connections.values.reduce(0) { $0 + $1.received.count }
        while total > configuration.maximumBufferedBytes {
            let candidates = held.connections.values.filter { $0.isEvictable && !$0.authenticated }
            guard let largest = candidates.max(by: { $0.received.count < $1.received.count }), !largest.received.isEmpty else { return }
            total -= largest.received.count
            close(largest.fd, &held, farewell: HTTPResponse.text(503, "too much unanswered in all").serialized(keepAlive: false))
        }
    }

    /// Closes the held connection that has waited longest (not an authenticated WebSocket).
    private func evictLongestWaiting(_ held: inout Held) -> Bool {
        let now = ContinuousClock.now
        let oldest = held.connections.values.filter(\.isEvictable).min { $0.waitingSince(now) < $1.waitingSince(now) }
        guard let oldest else { return false }
        close(oldest.fd, &held, farewell: [])
        return true
    }

    private func closeAll(_ held: Held) {
        for connection in held.connections.values {
            if connection.webSocket != nil {
                _ = DaemonSocket.sendWithoutWaiting(connection.fd, WebSocketFrame.close(code: 1001, reason: "the daemon is stopping"))
            }
            discard(connection)
        }
    }

    /// The limits now: heads get less time while many are awaited.
    private func limits(_ held: Held) -> ServerConnection.Limits {
        let awaited = held.connections.values.lazy.filter(\.isAwaitingHead).count
        return ServerConnection.Limits(
            headTimeout: awaited > configuration.crowdedHeads ? configuration.crowdedHeadTimeout : configuration.headTimeout,
            requestTimeout: configuration.requestTimeout, idleTimeout: configuration.idleTimeout,
            pingInterval: configuration.webSocketPingInterval, maximumBodyBytes: configuration.maximumBodyBytes)
    }

    /// `poll`'s timeout for `deadline` (`-1`: none).
    private static func milliseconds(until deadline: ContinuousClock.Instant?) -> Int32 {
        guard let deadline else { return -1 }
        let left = deadline - .now
        guard left > .zero else { return 0 }
        return Int32(min(Int64(Int32.max), left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000 + 1))
    }
}
