import HaulCore

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

/// Fans a download's events out to its subscribers (the producer threads never wait for them)
/// and to its observers (called on the producing thread, see ``observe(_:)``).
final class EventQueue: Sendable {
    fileprivate typealias Waiter = CheckedContinuation<Result<DownloadEvent?, DownloadError>, Never>

    /// What an observer sees: each event, then the download's result, once.
    enum Observation: Sendable {
        case event(DownloadEvent)
        case ended(Result<DownloadResult, DownloadError>)
    }
    /// Called for each observation, never twice at once, in order.
    typealias Observer = @Sendable (Observation) -> Void

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

    /// An observer, and an observation it has not been given yet. Structs, not tuples: an array
    /// of tuples with a closure in them was destroyed through the runtime's generic tuple code
    /// (with 1,000 small files, 9M of 184M user-space instructions went with these two arrays
    /// as tuples; callgrind).
    private struct Registered {
        let id: Int
        let observer: Observer
    }
    private struct Pending {
        let id: Int
        let observer: Observer
        var observation: Observation
    }

    private struct State {
        var history = Subscriber()   // what a late subscriber catches up on (its buffer only)
        var ending: Result<Void, DownloadError>?
        var subscribers: [Int: Subscriber] = [:]
        var nextID = 0
        var observers: [Registered] = []
        /// The download's result, once known (what a late observer ends with).
        var result: Result<DownloadResult, DownloadError>?
        /// Observations not yet delivered, in order, and whether a thread is delivering them.
        var undelivered: [Pending] = []
        var delivering = false

        /// Queues `observation` for every observer; true when the caller must deliver (no
        /// other thread is), which it does after leaving the lock. A progress snapshot replaces
        /// the observer's undelivered one when nothing came between them (a slow observer gets
        /// the newest, as a slow subscriber does, instead of a growing backlog).
        mutating func queueForObservers(_ observation: Observation) -> Bool {
            guard !observers.isEmpty else { return false }
            for registered in observers { queue(observation, for: registered.id, registered.observer) }
            return takeDelivery()
        }

        mutating func queue(_ observation: Observation, for id: Int, _ observer: @escaping Observer) {
            if case .event(.progress) = observation,
               let last = undelivered.lastIndex(where: { $0.id == id }),
               case .event(.progress) = undelivered[last].observation {
                undelivered[last].observation = observation
            } else {
                undelivered.append(Pending(id: id, observer: observer, observation: observation))
            }
        }

        mutating func takeDelivery() -> Bool {
            guard !delivering, !undelivered.isEmpty else { return false }
            delivering = true
            return true
        }
    }
    private let state = SharedStateLock(State())

    /// Calls `observer` with every event from now on, on the thread that produces it, after the
    /// events so far (consecutive progress snapshots collapsed, as for a late subscriber), and
    /// finally with the download's result. Calls never overlap and come in order: a thread that
    /// produces an event while another is delivering leaves it to that one, so no lock is held
    /// while the observer runs and it may call back into the download (``Download/cancel()``).
    func observe(_ observer: @escaping Observer) {
        let deliver = state.withLock { state -> Bool in
            state.nextID += 1
            let id = state.nextID
            for event in state.history.buffer { state.queue(.event(event), for: id, observer) }
            if let result = state.result {
                state.queue(.ended(result), for: id, observer)
            } else {
                state.observers.append(Registered(id: id, observer: observer))
            }
            return state.takeDelivery()
        }
        if deliver { deliverObservations() }
    }

    /// Delivers queued observations until none is left; only one thread at a time runs this.
    private func deliverObservations() {
        // The delivered batch's storage goes back as the next queue's, so a download that
        // delivers one event at a time allocates no array for each.
        var batch: [Pending] = []
        while true {
            batch.removeAll(keepingCapacity: true)
            state.withLock { state in
                swap(&batch, &state.undelivered)
                if batch.isEmpty { state.delivering = false }
            }
            if batch.isEmpty { return }
            for entry in batch { entry.observer(entry.observation) }
        }
    }

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

    /// An event queued but not yet handed to the subscribers waiting for it and the observers:
    /// ``run()`` does that, outside any lock of the caller's (see ``enqueue(_:)``).
    struct Delivery {
        fileprivate let queue: EventQueue
        fileprivate let event: DownloadEvent
        fileprivate let waiters: [Waiter]
        fileprivate let observers: Bool

        /// Resumes the waiting subscribers and delivers to the observers.
        func run() {
            for waiter in waiters { waiter.resume(returning: .success(event)) }
            if observers { queue.deliverObservations() }
        }
    }

    /// Delivers an event to every subscriber and observer.
    func yield(_ event: DownloadEvent) {
        enqueue(event).run()
    }

    /// Puts `event` in order for every subscriber and observer, without calling anyone: a caller
    /// holding a lock of its own (to keep its events in order) runs the returned delivery after
    /// releasing it, so an observer never runs under that lock.
    func enqueue(_ event: DownloadEvent) -> Delivery {
        let (ready, deliver) = state.withLock { state -> ([Waiter], Bool) in
            guard state.ending == nil else { return ([], false) }
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
            return (ready, state.queueForObservers(.event(event)))
        }
        return Delivery(queue: self, event: event, waiters: ready, observers: deliver)
    }

    /// Ends the sequence with the download's result: `finished` (or `skipped`) is the last event
    /// of a success, a failure is thrown; observers get the result after the last event. Later
    /// calls are ignored.
    func finish(_ result: Result<DownloadResult, DownloadError>) {
        if case .success(let done) = result {
            yield(done.skipped ? .skipped(done.fileURL) : .finished(done.fileURL))
        }
        let ending: Result<Void, DownloadError> = result.map { _ in () }
        let (ready, deliver) = state.withLock { state -> ([Waiter], Bool) in
            guard state.ending == nil else { return ([], false) }
            state.ending = ending
            state.result = result
            var ready: [Waiter] = []
            for id in state.subscribers.keys {
                if let waiter = state.subscribers[id]!.waiter {
                    state.subscribers[id]!.waiter = nil
                    state.subscribers[id]!.endingDelivered = true
                    ready.append(waiter)
                }
            }
            let deliver = state.queueForObservers(.ended(result))
            state.observers = []
            return (ready, deliver)
        }
        let delivered: Result<DownloadEvent?, DownloadError>
        switch ending {
        case .success: delivered = .success(nil)
        case .failure(let error): delivered = .failure(error)
        }
        for waiter in ready { waiter.resume(returning: delivered) }
        if deliver { deliverObservations() }
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
