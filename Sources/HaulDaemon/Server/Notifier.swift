import HaulCore
import HaulService

/// Sends aria2's notifications to every WebSocket (each passed the Host and Origin checks), as
/// aria2 does: they carry GIDs only. Each socket has an outbox a worker empties when the event
/// loop sees it signalled, so a slow client never holds up the service or another client.
final class Notifier: Sendable {
    /// One WebSocket as the notifier sees it.
    final class Subscriber: Sendable {
        /// Signalled when the outbox has something; its descriptor is made when the WebSocket
        /// is opened, which is refused (503) when the system has none.
        let wakeup = WakeupDescriptor()
        private let state = SharedStateLock<(outbox: [[UInt8]], overflowed: Bool)>(([], false))

        /// At most this many notifications wait for one socket; beyond, it is closed.
        static let outboxLimit = 4096

        /// Queues a notification.
        func offer(_ text: [UInt8]) {
            let queued = state.withLock { state -> Bool in
                guard !state.overflowed else { return false }
                guard state.outbox.count < Self.outboxLimit else {
                    state.overflowed = true
                    return true
                }
                state.outbox.append(text)
                return true
            }
            if queued { wakeup.signal() }
        }

        /// Takes the queued notifications; `nil` when the client fell too far behind.
        func take() -> [[UInt8]]? {
            wakeup.drain()
            return state.withLock { state in
                if state.overflowed { return nil }
                defer { state.outbox = [] }
                return state.outbox
            }
        }
    }

    private let subscribers = SharedStateLock([ObjectIdentifier: Subscriber]())

    /// The notification method of a service event, if aria2 has one.
    static func method(for kind: ServiceEvent.Kind) -> String? {
        switch kind {
        case .started: "aria2.onDownloadStart"
        case .paused: "aria2.onDownloadPause"
        case .removed: "aria2.onDownloadStop"
        case .completed: "aria2.onDownloadComplete"
        case .failed: "aria2.onDownloadError"
        case .added, .unpaused, .forgotten: nil
        }
    }

    /// Hands an event to every socket.
    func publish(_ event: ServiceEvent) {
        guard let method = Self.method(for: event.kind) else { return }
        let text = RPCNotification.text(method: method, gid: event.id.hex)
        let all = subscribers.withLock { Array($0.values) }
        for subscriber in all { subscriber.offer(text) }
    }

    /// Adds a socket.
    func add(_ subscriber: Subscriber) {
        subscribers.withLock { $0[ObjectIdentifier(subscriber)] = subscriber }
    }

    /// Removes a socket.
    func remove(_ subscriber: Subscriber) {
        _ = subscribers.withLock { $0.removeValue(forKey: ObjectIdentifier(subscriber)) }
    }
}
