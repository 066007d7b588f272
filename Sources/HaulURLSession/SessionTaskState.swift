#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Foundation
import Haul
import HaulCore
import HaulHTTP
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What one `URLSession` data task has delivered, shared by the session's delegate (which adds)
/// and the engine's thread (which waits and takes).
///
/// The body is a bounded queue of chunks. The engine waits in `poll` on this state's wake-up
/// descriptor and on its cancellation signal, so a cancel ends a wait at once. When the engine
/// falls behind by more than ``highWater`` bytes the task is suspended, and resumed below
/// ``lowWater``. On Linux a suspended task starts its request again when resumed (the body
/// arrives twice), so ranged requests are sent in windows instead (see ``SessionReader``),
/// and a task more than ``hardLimit`` bytes ahead (a server that ignores `Range`) is ended with
/// a retryable error (the engine resumes from the bytes it wrote, when it can).
final class SessionTaskState: Sendable {
    /// Queued bytes above which the task is suspended.
    static let highWater = 8 << 20
    /// Queued bytes below which a suspended task is resumed.
    static let lowWater = 2 << 20
    /// Queued bytes above which the task is ended where it cannot be suspended (Linux).
    static let hardLimit = 64 << 20

    /// What the delegate should do with the task after a chunk.
    enum Pressure { case proceed, suspend, cancel }

    /// The next thing the engine gets from the body.
    enum Next { case chunk(Data), end }

    private struct State {
        var policy: RedirectPolicy
        var task: URLSessionDataTask?
        var head: ResponseHead?
        var expectedLength: Int64?
        /// Set when the redirect policy refused a hop: the exchange ends with it.
        var refusal: DownloadError?
        var chunks: [Data] = []
        var firstChunk = 0
        var queuedBytes = 0
        var suspended = false
        var completed = false
        var failure: DownloadError?
        var readerWaiting = false
        /// The redirect callback is deciding; a cancel waits until its completion handler was called.
        var redirecting = false
        var cancelAfterRedirect = false

        /// Removes the first queued chunk (call only when there is one).
        mutating func takeChunk() -> Data {
            let chunk = chunks[firstChunk]
            firstChunk += 1
            queuedBytes -= chunk.count
            if firstChunk > 64, firstChunk * 2 > chunks.count {
                chunks.removeFirst(firstChunk)
                firstChunk = 0
            }
            return chunk
        }

        /// The task to resume when it was suspended and the queue has drained below the low-water mark.
        mutating func resumeIfDrained() -> URLSessionDataTask? {
            guard suspended, queuedBytes < SessionTaskState.lowWater else { return nil }
            suspended = false
            return task
        }
    }

    private let state: SharedStateLock<State>
    private let wakeup = WakeupDescriptor()
    /// Builds the request of each redirect hop.
    let template: SessionRequestTemplate

    init(policy: RedirectPolicy, template: SessionRequestTemplate) {
        state = SharedStateLock(State(policy: policy))
        self.template = template
    }

    // MARK: The delegate's side

    /// Remembers the task (to cancel, suspend or resume it).
    func attach(_ task: URLSessionDataTask) {
        state.withLock { $0.task = task }
    }

    /// Follows a redirect under the policy: the next request, or `nil` when refused (recorded).
    func redirect(status: Int, location: String?) -> URLRequest? {
        state.withLock { state -> URLRequest? in
            do throws(DownloadError) {
                _ = try mappingHTTPErrors { () throws(HTTPClientError) in try state.policy.follow(status: status, location: location) }
                return try template.request(for: state.policy)
            } catch {
                state.refusal = error
                return nil
            }
        }
    }

    /// Runs the redirect callback's decision: `decide` calls FoundationNetworking's completion
    /// handler. A task already cancelled gets no call (FoundationNetworking on Linux traps on a
    /// redirect completion it no longer waits for), and a cancel that arrives meanwhile waits
    /// until the handler was called. The engine is woken afterwards (a refusal ends its wait).
    func redirecting(_ decide: () -> Void) {
        let proceed = state.withLock { state -> Bool in
            guard state.task != nil, !state.completed else { return false }
            state.redirecting = true
            return true
        }
        guard proceed else { return }
        decide()
        let cancelNow = state.withLock { state -> URLSessionDataTask? in
            state.redirecting = false
            guard state.cancelAfterRedirect else { return nil }
            state.cancelAfterRedirect = false
            defer { state.task = nil }
            return state.task
        }
        cancelNow?.cancel()
        wake()
    }

    /// Records the final response head.
    func received(_ response: URLResponse) {
        let head = ResponseHead(response)
        let length = response.expectedContentLength >= 0 ? response.expectedContentLength : nil
        state.withLock { state in
            state.head = head
            state.expectedLength = length
        }
        wake()
    }

    /// Queues a body chunk and says whether the task should pause.
    func received(_ data: Data) -> Pressure {
        let (pressure, waiting) = state.withLock { state -> (Pressure, Bool) in
            guard state.failure == nil else { return (.cancel, false) }
            state.chunks.append(data)
            state.queuedBytes += data.count
            let waiting = state.readerWaiting
            state.readerWaiting = false
            #if os(Linux)
            if state.queuedBytes > Self.hardLimit {
                state.failure = DownloadError(.networkError, "the URLSession transport had \(state.queuedBytes >> 20) MiB "
                                              + "the download could not write in time (FoundationNetworking cannot pause a transfer)")
                return (.cancel, true)
            }
            #else
            if state.queuedBytes > Self.highWater, !state.suspended {
                state.suspended = true
                return (.suspend, waiting)
            }
            #endif
            return (.proceed, waiting)
        }
        if waiting { wakeup.signal() }
        return pressure
    }

    /// Ends the body: complete, or failed with `error` (mapped to a ``DownloadError``).
    func completed(error: (any Error)?) {
        state.withLock { state in
            state.completed = true
            if let error, state.failure == nil {
                state.failure = DownloadError(urlSessionError: error, afterHead: state.head != nil)
            }
        }
        wake()
    }

    private func wake() {
        let waiting = state.withLock { state -> Bool in
            defer { state.readerWaiting = false }
            return state.readerWaiting
        }
        if waiting { wakeup.signal() }
    }

    // MARK: The engine's side

    /// The policy after every hop the session followed.
    var policy: RedirectPolicy { state.withLock { $0.policy } }

    /// The body length announced by the final response, if any.
    var expectedLength: Int64? { state.withLock { $0.expectedLength } }

    /// Waits for the final response head.
    ///
    /// - Throws: the redirect policy's refusal, the task's failure, `headerTimeout` at `deadline`,
    ///   `cancelled` when `cancellation` fires (the task is cancelled too).
    func waitForHead(until deadline: ContinuousClock.Instant, cancellation: CancellationSignal) throws(DownloadError) -> ResponseHead {
        while true {
            let outcome = state.withLock { state -> Result<ResponseHead, DownloadError>? in
                if let refusal = state.refusal { return .failure(refusal) }
                if let head = state.head { return .success(head) }
                if let failure = state.failure { return .failure(failure) }
                if state.completed { return .failure(DownloadError(.malformedResponse, "the response ended before its head")) }
                state.readerWaiting = true
                return nil
            }
            if let outcome { return try outcome.get() }
            try wait(until: deadline, cancellation: cancellation, timeout: DownloadError(.headerTimeout, "the response head did not arrive in time"))
        }
    }

    /// The next chunk of the body, or its end; waits at most `stallTimeout` for it.
    ///
    /// Chunks that arrived before a failure are handed out first, so their bytes are kept.
    /// - Throws: `stalled`, the task's failure (`truncatedBody`, network errors...), `cancelled`.
    func next(stallTimeout: Duration, cancellation: CancellationSignal) throws(DownloadError) -> Next {
        let deadline = ContinuousClock.now + stallTimeout
        while true {
            let (outcome, resume) = state.withLock { state -> (Result<Next, DownloadError>?, URLSessionDataTask?) in
                if state.firstChunk < state.chunks.count {
                    return (.success(.chunk(state.takeChunk())), state.resumeIfDrained())
                }
                if let failure = state.failure { return (.failure(failure), nil) }
                if state.completed { return (.success(.end), nil) }
                state.readerWaiting = true
                return (nil, nil)
            }
            resume?.resume()
            if let outcome { return try outcome.get() }
            try wait(until: deadline, cancellation: cancellation, timeout: DownloadError(.stalled, "no data for too long (stalled)"))
        }
    }

    /// The next queued chunk if one is there now, else `nil` (never waits, never throws: the
    /// end or a failure is left for ``next(stallTimeout:cancellation:)``).
    func nextIfQueued() -> Data? {
        let (chunk, resume) = state.withLock { state -> (Data?, URLSessionDataTask?) in
            guard state.firstChunk < state.chunks.count else { return (nil, nil) }
            return (state.takeChunk(), state.resumeIfDrained())
        }
        resume?.resume()
        return chunk
    }

    /// Cancels the task (idempotent; a finished task ignores it).
    func cancel() {
        let task = state.withLock { state -> URLSessionDataTask? in
            if state.redirecting {
                state.cancelAfterRedirect = true   // see redirecting(_:)
                return nil
            }
            defer { state.task = nil }
            return state.completed ? nil : state.task
        }
        task?.cancel()
    }

    /// Sleeps until the delegate wakes this state, `cancellation` fires or `deadline` passes.
    ///
    /// - Throws: `timeout`, `cancelled`; `resourceExhausted` when there is no descriptor to wait
    ///   on (the task is cancelled then).
    private func wait(until deadline: ContinuousClock.Instant, cancellation: CancellationSignal,
                      timeout: DownloadError) throws(DownloadError) {
        let descriptors: (own: Int32, cancellation: Int32)
        do throws(ResourceError) {
            descriptors = (try wakeup.pollDescriptor, try cancellation.pollDescriptor)
        } catch {
            cancel()
            throw DownloadError(error)
        }
        var fds = [pollfd(fd: descriptors.own, events: Int16(POLLIN), revents: 0),
                   pollfd(fd: descriptors.cancellation, events: Int16(POLLIN), revents: 0)]
        while true {
            if cancellation.isCancelled {
                cancel()
                throw DownloadError(.cancelled, "cancelled")
            }
            let ms = (deadline - ContinuousClock.now).milliseconds
            if ms <= 0 {
                cancel()
                throw timeout
            }
            fds[0].revents = 0
            fds[1].revents = 0
            if poll(&fds, 2, Int32(clamping: ms)) > 0, fds[0].revents != 0 {
                wakeup.drain()
                return
            }
        }
    }
}
