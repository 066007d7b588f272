import HaulCore

/// Hands a ``DownloadService``'s events to their observers in the order the service made them,
/// and each download's snapshots to the streams that follow it.
///
/// The service queues events while it holds its own lock (so their order is the order of its
/// changes) and delivers them after: one thread at a time delivers, the others leave their
/// events to it, and observers are never called twice at once.
final class ServiceEventHub: Sendable {
    typealias Observer = @Sendable (ServiceEvent) -> Void
    typealias SnapshotStream = AsyncStream<ServiceDownload>

    private struct State {
        var observers: [Int: Observer] = [:]
        var nextID = 0
        var undelivered: [ServiceEvent] = []
        var delivering = false
        var followers: [DownloadID: [Int: SnapshotStream.Continuation]] = [:]
    }
    private let state = SharedStateLock(State())

    /// Registers an observer; returns the number that removes it.
    func addObserver(_ observer: @escaping Observer) -> Int {
        state.withLock { state in
            state.nextID += 1
            state.observers[state.nextID] = observer
            return state.nextID
        }
    }

    /// Removes an observer.
    func removeObserver(_ id: Int) {
        _ = state.withLock { $0.observers.removeValue(forKey: id) }
    }

    /// Queues events for delivery (called with the service's lock held).
    func enqueue(_ events: [ServiceEvent]) {
        guard !events.isEmpty else { return }
        state.withLock { $0.undelivered += events }
    }

    /// Delivers the queued events, unless another thread is delivering (it then delivers these too).
    func deliver() {
        while true {
            let batch = state.withLock { state -> (events: [ServiceEvent], observers: [Observer])? in
                guard !state.delivering, !state.undelivered.isEmpty else { return nil }
                state.delivering = true
                defer { state.undelivered = [] }
                return (state.undelivered, state.observers.sorted { $0.key < $1.key }.map(\.value))
            }
            guard let batch else { return }
            for event in batch.events {
                for observer in batch.observers { observer(event) }
            }
            state.withLock { $0.delivering = false }
        }
    }

    /// A stream of a download's snapshots, beginning with `current`; it ends once the download
    /// is a result.
    func follow(_ id: DownloadID, current: ServiceDownload, onEnd: @escaping @Sendable () -> Void) -> SnapshotStream {
        let (stream, continuation) = SnapshotStream.makeStream(bufferingPolicy: .bufferingNewest(64))
        continuation.yield(current)
        if current.status.isStopped {
            continuation.finish()
            return stream
        }
        let number = state.withLock { state in
            state.nextID += 1
            state.followers[id, default: [:]][state.nextID] = continuation
            return state.nextID
        }
        continuation.onTermination = { [weak self] _ in
            self?.state.withLock { state in
                state.followers[id]?[number] = nil
                if state.followers[id]?.isEmpty == true { state.followers[id] = nil }
            }
            onEnd()
        }
        return stream
    }

    /// Whether a stream follows `id`.
    func isFollowed(_ id: DownloadID) -> Bool {
        state.withLock { $0.followers[id] != nil }
    }

    /// Which of `ids` a stream follows (one look under the lock for all of them).
    func followed(among ids: [DownloadID]) -> [DownloadID] {
        state.withLock { state in state.followers.isEmpty ? [] : ids.filter { state.followers[$0] != nil } }
    }

    /// Gives the streams that follow `id` its new snapshot; ends them once the download is a
    /// result, or gone (`nil`: forgotten).
    func publish(_ id: DownloadID, _ snapshot: ServiceDownload?) {
        let isOver = snapshot?.status.isStopped ?? true
        let continuations = state.withLock { state -> [SnapshotStream.Continuation] in
            let found = state.followers[id].map { Array($0.values) } ?? []
            if isOver { state.followers[id] = nil }
            return found
        }
        for continuation in continuations {
            if let snapshot { continuation.yield(snapshot) }
            if isOver { continuation.finish() }
        }
    }
}
