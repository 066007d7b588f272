import CHaulSys
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Threads for blocking work (transfers block in `poll`, `recv` and `pwrite`, so they never run
/// on Swift's cooperative pool), reused and capped.
///
/// A body runs on a parked thread when one is free, else on a new thread while fewer than
/// ``maximumThreads`` are alive, else it waits its turn (first come, first served). A thread
/// that finished its work parks for up to ``idleLifetime`` waiting for the next body, then
/// exits, so many short downloads do not pay a thread creation each and an idle program holds
/// no threads. Every thread blocks `SIGPIPE` and carries the name of the body it runs (seen in
/// `top -H`, `ps -L`, gdb).
///
/// A thread the system refuses (`pthread_create` fails: `EAGAIN` at the process's or the
/// system's limit) is an error of the call that wanted it, never a trap: ``run(name:_:)`` and
/// ``runAlone(name:_:)`` throw, the body does not run, and the pool counts only the threads
/// that started.
///
/// Each `Downloader` owns one; nothing is shared between pools.
package final class ThreadPool: Sendable {
    /// Starts a detached thread that runs the body, named for the first body it runs; returns 0,
    /// or the error number when the thread did not start (then the body never runs).
    package typealias Starter = @Sendable (_ name: StaticString, _ body: @escaping @Sendable () -> Void) -> Int32

    /// The most threads alive at once (parked ones included).
    package let maximumThreads: Int
    /// How long a thread without work stays for the next body.
    package let idleLifetime: Duration
    /// Called on a thread that retires after its idle time (a downloader frees spare buffers then).
    private let retired: @Sendable () -> Void
    private let starter: Starter

    private struct Job {
        let name: StaticString
        let body: @Sendable () -> Void
    }
    /// The bodies waiting for a thread, the threads parked waiting for a body, and every thread
    /// alive (parked ones included).
    private struct State {
        var waiting = FIFOQueue<Job>()
        var parked = 0
        var alive = 0

        /// Queues `job` for a parked thread when one is free for it; returns whether it did.
        mutating func handToParked(_ job: Job) -> Bool {
            guard parked > waiting.count else { return false }
            waiting.append(job)
            return true
        }
    }
    private let state = ConditionLock(State())

    /// - Parameters:
    ///   - maximumThreads: the cap (at least 1).
    ///   - idleLifetime: how long a parked thread waits for work before it exits.
    ///   - retired: runs on a thread about to exit after its idle time.
    ///   - starter: starts the threads (tests make it fail; see ``systemStarter``).
    package init(maximumThreads: Int = 64, idleLifetime: Duration = .seconds(5),
                 retired: @escaping @Sendable () -> Void = {}, starter: @escaping Starter = ThreadPool.systemStarter) {
        self.maximumThreads = max(1, maximumThreads)
        self.idleLifetime = idleLifetime
        self.retired = retired
        self.starter = starter
    }

    /// Runs `body` on a thread named `name`: at once when a thread is parked or the cap allows a
    /// new one, else when a thread becomes free.
    ///
    /// A body that needs a new thread is handed to it directly, so when the thread does not
    /// start nothing of the body is left in the pool.
    ///
    /// - Throws: ``ResourceError`` (`.thread`) when a new thread was needed and did not start;
    ///   `body` does not run then.
    package func run(name: StaticString, _ body: @escaping @Sendable () -> Void) throws(ResourceError) {
        let job = Job(name: name, body: body)
        let (startThread, parkedThread) = state.withLock { state -> (Bool, Bool) in
            if state.handToParked(job) { return (false, true) }
            guard state.alive < maximumThreads else {
                state.waiting.append(job)
                return (false, false)
            }
            state.alive += 1
            return (true, false)
        }
        if parkedThread { state.signal() }   // one parked thread takes it; waking all would send the rest back to sleep
        guard startThread else { return }
        let code = starter(name) { [self] in serve(first: job) }
        guard code != 0 else { return }
        threadDidNotStart()
        throw .thread(code)
    }

    /// Runs `body` on a thread named `name` only when one is free now (parked, or the cap allows
    /// a new one that starts); returns whether it does. For work its caller can do itself.
    package func runIfFree(name: StaticString, _ body: @escaping @Sendable () -> Void) -> Bool {
        let job = Job(name: name, body: body)
        let start = state.withLock { state -> Bool? in
            if state.handToParked(job) { return false }
            guard state.alive < maximumThreads else { return nil }
            state.alive += 1
            return true
        }
        if start == false { state.signal() }
        guard let start else { return false }
        guard start else { return true }
        if starter(name, { [self] in serve(first: job) }) == 0 { return true }
        threadDidNotStart()
        return false
    }

    /// Runs `body` on a new thread of its own that ends with it, outside the cap and never
    /// reused: for bodies that change their thread for good (an unprivileged thread cannot leave
    /// the idle scheduling class).
    ///
    /// - Throws: ``ResourceError`` (`.thread`) when the thread did not start; `body` does not run then.
    package func runAlone(name: StaticString, _ body: @escaping @Sendable () -> Void) throws(ResourceError) {
        let code = starter(name) {
            Self.setName(name)
            body()
        }
        if code != 0 { throw .thread(code) }
    }

    /// How many threads are alive now (parked ones included).
    package var threadCount: Int { state.withLock { $0.alive } }

    /// A thread counted in `alive` did not start. Bodies queued at the cap wait for the threads
    /// that are alive; when none is (every thread counted was failing to start), they get a new
    /// thread, and when that fails too the calling thread runs them, so no body is ever left
    /// waiting for a thread that does not exist.
    private func threadDidNotStart() {
        let stranded = state.withLock { state -> Bool in
            state.alive -= 1
            guard state.alive == 0, !state.waiting.isEmpty else { return false }
            state.alive += 1   // the replacement, or this thread while it runs them
            return true
        }
        guard stranded, starter("haul-pool", { [self] in serve(first: nil) }) != 0 else { return }
        Self.withSIGPIPEBlocked {
            while let job = state.withLock({ state -> Job? in
                if let job = state.waiting.popFirst() { return job }
                state.alive -= 1
                return nil
            }) {
                job.body()
            }
        }
    }

    /// Runs `body` with `SIGPIPE` blocked on the calling thread, as on the pool's own threads;
    /// one raised meanwhile is consumed before the thread's mask is restored (Linux: elsewhere
    /// sockets carry `SO_NOSIGPIPE`).
    private static func withSIGPIPEBlocked(_ body: () -> Void) {
        #if canImport(Glibc)
        var pipe = sigset_t(), previous = sigset_t(), pending = sigset_t()
        sigemptyset(&pipe)
        sigaddset(&pipe, SIGPIPE)
        pthread_sigmask(SIG_BLOCK, &pipe, &previous)
        body()
        if sigpending(&pending) == 0, sigismember(&pending, SIGPIPE) == 1, sigismember(&previous, SIGPIPE) == 0 {
            var now = timespec()
            _ = sigtimedwait(&pipe, nil, &now)
        }
        pthread_sigmask(SIG_SETMASK, &previous, nil)
        #else
        body()
        #endif
    }

    /// A thread's life: `first`, the bodies that are waiting, then parked until the next or
    /// until it retires.
    private func serve(first: Job?) {
        var named: StaticString?
        var job = first ?? next()
        while let current = job {
            // A thread that runs one kind of body after another is named once, not per body.
            if named?.utf8Start != current.name.utf8Start { Self.setName(current.name) }
            named = current.name
            current.body()
            job = next()
        }
        retired()
    }

    /// The next body for this thread, waiting up to ``idleLifetime``; `nil` when the thread retires.
    private func next() -> Job? {
        let queued = state.withLock { state -> Job? in
            if let job = state.waiting.popFirst() { return job }
            state.parked += 1
            return nil
        }
        if let queued { return queued }
        let deadline = ContinuousClock.now + idleLifetime
        return state.withLock(waitingWhile: { $0.waiting.isEmpty }, until: deadline) { state -> Job? in
            state.parked -= 1
            if let job = state.waiting.popFirst() { return job }
            state.alive -= 1
            return nil
        }
    }

    private static func setName(_ name: StaticString) {
        name.withUTF8Buffer { bytes in
            var text = [CChar](repeating: 0, count: bytes.count + 1)
            for (index, byte) in bytes.enumerated() { text[index] = CChar(bitPattern: byte) }
            haul_set_thread_name(text)
        }
    }

    /// Starts a detached thread with a 512 KiB stack and `SIGPIPE` blocked; returns 0 or the
    /// error of `pthread_create` (the name is set by the body).
    package static let systemStarter: Starter = { _, body in startThread(body) }

    private static func startThread(_ body: @escaping @Sendable () -> Void) -> Int32 {
        final class Box: Sendable {   // handed to exactly one thread, read once
            let body: @Sendable () -> Void
            init(_ body: @escaping @Sendable () -> Void) { self.body = body }
        }
        let box = Unmanaged.passRetained(Box(body)).toOpaque()
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        pthread_attr_setstacksize(&attributes, 512 * 1024)
        #if canImport(Glibc)
        var thread = pthread_t()
        #else
        var thread: pthread_t?
        #endif
        let code = pthread_create(&thread, &attributes, { raw in
            // Optional on Linux, not on Darwin: one spelling for both.
            let pointer: UnsafeMutableRawPointer? = raw
            let box = Unmanaged<Box>.fromOpaque(pointer!).takeRetainedValue()
            haul_block_sigpipe_in_thread()
            box.body()
            return nil
        }, box)
        pthread_attr_destroy(&attributes)
        if code != 0 { Unmanaged<Box>.fromOpaque(box).release() }   // the thread never took it
        return code
    }
}
