import Synchronization

/// A download's events, in order, as an `AsyncSequence`.
///
/// Each iterator is its own subscriber: two loops over the same download's events (for example
/// a view and a logger, or two callers that started the same key) both see every event. An
/// iterator created late first receives what it missed, with consecutive progress snapshots
/// collapsed into the newest. A slow (or absent) consumer never makes events pile up: unread
/// progress snapshots collapse into the newest one, while every other event is kept. The sequence
/// ends after ``DownloadEvent/finished(_:)`` or ``DownloadEvent/skipped(_:)``, or throws the
/// download's ``DownloadError``. Cancelling the task that iterates cancels the download.
public struct DownloadEvents: AsyncSequence, Sendable {
    /// Each element is one event.
    public typealias Element = DownloadEvent
    /// Iteration throws only ``DownloadError``.
    public typealias Failure = DownloadError

    let queue: EventQueue
    let onCancel: @Sendable () -> Void

    /// Iterates the events.
    public struct AsyncIterator: AsyncIteratorProtocol {
        let queue: EventQueue
        let subscriber: Int
        let onCancel: @Sendable () -> Void

        /// The next event, `nil` after the last, or the download's error (thrown once).
        public mutating func next() async throws(DownloadError) -> DownloadEvent? {
            try await queue.next(subscriber: subscriber, onCancel: onCancel)
        }
    }

    /// Starts iterating: a new subscriber that first receives what it missed.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(queue: queue, subscriber: queue.subscribe(), onCancel: onCancel)
    }
}

/// Fans a download's events out to its subscribers (the producer threads never wait for them).
final class EventQueue: Sendable {
    private typealias Waiter = CheckedContinuation<Result<DownloadEvent?, DownloadError>, Never>

    private struct Subscriber {
        var buffer: [DownloadEvent] = []
        var waiter: Waiter?
        var endingDelivered = false

        /// Appends, replacing an unread progress snapshot at the end by a newer one.
        mutating func append(_ event: DownloadEvent) {
            if case .progress = event, case .progress? = buffer.last {
                buffer[buffer.count - 1] = event
            } else {
                buffer.append(event)
            }
        }
    }

    private struct State {
        var history = Subscriber()   // what a late subscriber catches up on (its buffer only)
        var ending: Result<Void, DownloadError>?
        var subscribers: [Int: Subscriber] = [:]
        var nextID = 0
    }
    private let state = Mutex(State())

    /// Registers a subscriber, primed with the events so far.
    func subscribe() -> Int {
        state.withLock { state in
            var subscriber = Subscriber()
            subscriber.buffer = state.history.buffer
            state.nextID += 1
            state.subscribers[state.nextID] = subscriber
            return state.nextID
        }
    }

    /// Delivers an event to every subscriber.
    func yield(_ event: DownloadEvent) {
        let ready = state.withLock { state -> [Waiter] in
            guard state.ending == nil else { return [] }
            state.history.append(event)
            var ready: [Waiter] = []
            for id in state.subscribers.keys {
                if let waiter = state.subscribers[id]!.waiter {
                    state.subscribers[id]!.waiter = nil
                    ready.append(waiter)
                } else {
                    state.subscribers[id]!.append(event)
                }
            }
            return ready
        }
        for waiter in ready { waiter.resume(returning: .success(event)) }
    }

    /// Ends the sequence, normally or with an error. Later calls are ignored.
    func finish(_ ending: Result<Void, DownloadError>) {
        let ready = state.withLock { state -> [Waiter] in
            guard state.ending == nil else { return [] }
            state.ending = ending
            var ready: [Waiter] = []
            for id in state.subscribers.keys {
                if let waiter = state.subscribers[id]!.waiter {
                    state.subscribers[id]!.waiter = nil
                    state.subscribers[id]!.endingDelivered = true
                    ready.append(waiter)
                }
            }
            return ready
        }
        let result: Result<DownloadEvent?, DownloadError>
        switch ending {
        case .success: result = .success(nil)
        case .failure(let error): result = .failure(error)
        }
        for waiter in ready { waiter.resume(returning: result) }
    }

    func next(subscriber id: Int, onCancel: @escaping @Sendable () -> Void) async throws(DownloadError) -> DownloadEvent? {
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: Waiter) in
                let ready = state.withLock { state -> Result<DownloadEvent?, DownloadError>? in
                    guard var subscriber = state.subscribers[id] else { return .success(nil) }
                    defer { state.subscribers[id] = subscriber }
                    if !subscriber.buffer.isEmpty { return .success(subscriber.buffer.removeFirst()) }
                    switch state.ending {
                    case nil:
                        subscriber.waiter = continuation
                        return nil
                    case .success?:
                        return .success(nil)
                    case .failure(let error)?:
                        if subscriber.endingDelivered { return .success(nil) }   // the error is thrown once
                        subscriber.endingDelivered = true
                        return .failure(error)
                    }
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            onCancel()
        }
        return try result.get()
    }
}
