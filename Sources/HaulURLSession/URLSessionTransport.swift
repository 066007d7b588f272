#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Foundation
import Haul
import HaulCore
import HaulHTTP

extension Downloader.Transport {
    /// Foundation's `URLSession` (data tasks, one session per ``Downloader``).
    ///
    /// `URLSession` keeps its own connections and parses responses itself, so Haul's header
    /// limits and framing checks do not apply, and the connect and header timeouts add up to
    /// one deadline for the response head (it does not say when it connected). It verifies
    /// certificates itself: an extra CA file or `insecure` in ``TLSOptions`` fails with
    /// ``DownloadError/Code/notSupported``. On Linux (FoundationNetworking) a task cannot be
    /// paused, so ranged requests are sent in windows of 16 MiB to keep memory bounded.
    public static let urlSession = Downloader.Transport(name: "urlSession") { URLSessionTransport(configuration: $0) }
}

/// The `URLSession` behind ``Downloader/Transport/urlSession``: one session per ``Downloader``
/// (made on first use and kept by its connection pool), ephemeral (no cookies, cache or
/// credential store), with one delegate for every task.
///
/// Only data tasks are used: their body arrives in memory and the engine writes it through
/// Haul's own storage, so resume, segments and verification work as with the native client.
final class URLSessionTransport: AlternateTransport {
    /// The session; its delegate is ``SessionDelegate``.
    let session: URLSession
    private let delegate: SessionDelegate

    /// Creates the session for a downloader's configuration.
    init(configuration: Downloader.Configuration) {
        let delegate = SessionDelegate()
        let settings = URLSessionConfiguration.ephemeral
        // Haul's HostSlots caps connections per host; URLSession must not queue below that cap
        // (a queued task would wait for its head and time out).
        settings.httpMaximumConnectionsPerHost = max(configuration.maximumConnectionsPerHost, 16)
        settings.httpCookieStorage = nil
        settings.httpShouldSetCookies = false
        settings.urlCache = nil
        settings.urlCredentialStorage = nil
        settings.requestCachePolicy = .reloadIgnoringLocalCacheData
        // One serial queue: the chunks of one task arrive in order.
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        queue.name = "haul-urlsession"
        self.delegate = delegate
        session = URLSession(configuration: settings, delegate: delegate, delegateQueue: queue)
    }

    deinit {
        session.invalidateAndCancel()
    }

    /// Sends a GET as a data task and waits for the final response head (``SessionReader``).
    func open(url: HTTPURL, userHeaders: [(name: String, value: String)], range: ByteRangeRequest?, ifRange: String?,
              configuration: Downloader.Configuration, cancellation: CancellationSignal,
              buffer: UnsafeMutableRawBufferPointer) throws(DownloadError) -> (any AlternateResponse, ResponseHead, HTTPURL) {
        let (reader, head, finalURL) = try SessionReader.open(
            url: url, userHeaders: userHeaders, range: range, ifRange: ifRange, configuration: configuration,
            transport: self, cancellation: cancellation, buffer: buffer)
        return (reader, head, finalURL)
    }

    /// Creates a data task for `request` whose callbacks go to `state`, and starts it.
    func start(_ request: URLRequest, state: SessionTaskState) {
        let task = session.dataTask(with: request)
        delegate.register(state, for: task.taskIdentifier)
        state.attach(task)
        task.resume()
    }
}

/// The session's one delegate: routes every callback to its task's ``SessionTaskState`` by task
/// identifier (on Linux, FoundationNetworking ignores per-task delegates).
final class SessionDelegate: NSObject, URLSessionDataDelegate, Sendable {
    private let tasks = SharedStateLock<[Int: SessionTaskState]>([:])

    /// Routes the callbacks of the task with this identifier to `state` until it completes.
    func register(_ state: SessionTaskState, for identifier: Int) {
        tasks.withLock { $0[identifier] = state }
    }

    private func state(of task: URLSessionTask) -> SessionTaskState? {
        tasks.withLock { $0[task.taskIdentifier] }
    }

    /// Applies Haul's ``RedirectPolicy``: the next request carries only what the policy allows;
    /// a refused redirect ends the task with the policy's error.
    func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                    newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void) {
        guard let state = state(of: task) else {
            completionHandler(nil)
            return
        }
        // A refusal is recorded in the state (the engine ends the exchange with it). The handler is
        // called at most once and never after the task was cancelled: FoundationNetworking on Linux
        // traps otherwise ("Received callback for HTTP redirection, but we're not waiting for it").
        state.redirecting {
            completionHandler(state.redirect(status: response.statusCode, location: response.value(forHTTPHeaderField: "Location")))
        }
    }

    /// Records the final response head; the body always proceeds (the engine checks the status).
    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void) {
        state(of: dataTask)?.received(response)
        completionHandler(.allow)
    }

    /// Queues a body chunk for the engine, suspending or ending the task when the engine is behind.
    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        guard let state = state(of: dataTask) else { return }
        switch state.received(data) {
        case .proceed: break
        case .suspend: dataTask.suspend()
        case .cancel: dataTask.cancel()
        }
    }

    /// Ends the task's body (with its error, if any) and forgets the task.
    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let state = tasks.withLock { $0.removeValue(forKey: task.taskIdentifier) }
        state?.completed(error: error)
    }
}
