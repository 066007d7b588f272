import Synchronization

/// A download's events, in order, as an `AsyncSequence` for one consumer.
///
/// Unlike a plain `AsyncThrowingStream`, a slow (or absent) consumer never makes events pile
/// up: consecutive progress snapshots that were not read yet collapse into the newest one,
/// while every other event (started, retrying, finished...) is kept. The sequence ends after
/// ``DownloadEvent/finished(_:)`` or ``DownloadEvent/skipped(_:)``, or throws the download's
/// ``DownloadError``. Cancelling the task that iterates cancels the download.
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
        let onCancel: @Sendable () -> Void

        /// The next event, `nil` after the last, or the download's error.
        public mutating func next() async throws(DownloadError) -> DownloadEvent? {
            try await queue.next(onCancel: onCancel)
        }
    }

    /// Starts iterating (one consumer per download).
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(queue: queue, onCancel: onCancel)
    }
}

/// The buffer between a download's producer threads and its one consumer.
final class EventQueue: Sendable {
    private struct State {
        var buffer: [DownloadEvent] = []
        var head = 0
        var ending: Result<Void, DownloadError>?
        var waiter: CheckedContinuation<Result<DownloadEvent?, DownloadError>, Never>?
    }
    private let state = Mutex(State())

    /// Adds an event; a progress event replaces an unread progress event at the end.
    func yield(_ event: DownloadEvent) {
        let waiter = state.withLock { state -> CheckedContinuation<Result<DownloadEvent?, DownloadError>, Never>? in
            guard state.ending == nil else { return nil }
            if let waiter = state.waiter {
                state.waiter = nil
                _ = waiter
                return waiter
            }
            if case .progress = event, state.buffer.count > state.head, case .progress = state.buffer[state.buffer.count - 1] {
                state.buffer[state.buffer.count - 1] = event
            } else {
                state.buffer.append(event)
            }
            return nil
        }
        waiter?.resume(returning: .success(event))
    }

    /// Ends the sequence, normally or with an error. Later calls are ignored.
    func finish(_ ending: Result<Void, DownloadError>) {
        let waiter = state.withLock { state -> CheckedContinuation<Result<DownloadEvent?, DownloadError>, Never>? in
            guard state.ending == nil else { return nil }
            state.ending = ending
            let waiter = state.waiter
            state.waiter = nil
            return waiter
        }
        guard let waiter else { return }
        switch ending {
        case .success: waiter.resume(returning: .success(nil))
        case .failure(let error): waiter.resume(returning: .failure(error))
        }
    }

    func next(onCancel: @escaping @Sendable () -> Void) async throws(DownloadError) -> DownloadEvent? {
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<DownloadEvent?, DownloadError>, Never>) in
                let ready = state.withLock { state -> Result<DownloadEvent?, DownloadError>? in
                    if state.head < state.buffer.count {
                        let event = state.buffer[state.head]
                        state.head += 1
                        if state.head == state.buffer.count {
                            state.buffer.removeAll(keepingCapacity: true)
                            state.head = 0
                        }
                        return .success(event)
                    }
                    switch state.ending {
                    case .success?: return .success(nil)
                    case .failure(let error)?:
                        state.ending = .success(())   // the error is thrown once
                        return .failure(error)
                    case nil:
                        state.waiter = continuation
                        return nil
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
