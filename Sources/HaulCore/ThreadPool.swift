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
/// Each `Downloader` owns one; nothing is shared between pools.
package final class ThreadPool: @unchecked Sendable {   // all mutable state is under `monitor`
    /// The most threads alive at once (parked ones included).
    package let maximumThreads: Int
    /// How long a thread without work stays for the next body.
    package let idleLifetime: Duration
    /// Called on a thread that retires after its idle time (a downloader frees spare buffers then).
    private let retired: @Sendable () -> Void

    private struct Job {
        let name: StaticString
        let body: @Sendable () -> Void
    }
    private let monitor = Monitor()
    private var waiting = FIFOQueue<Job>()
    private var parked = 0
    private var alive = 0

    /// - Parameters:
    ///   - maximumThreads: the cap (at least 1).
    ///   - idleLifetime: how long a parked thread waits for work before it exits.
    ///   - retired: runs on a thread about to exit after its idle time.
    package init(maximumThreads: Int = 64, idleLifetime: Duration = .seconds(5),
                 retired: @escaping @Sendable () -> Void = {}) {
        self.maximumThreads = max(1, maximumThreads)
        self.idleLifetime = idleLifetime
        self.retired = retired
    }

    /// Runs `body` on a thread named `name`: at once when a thread is parked or the cap allows a
    /// new one, else when a thread becomes free.
    package func run(name: StaticString, _ body: @escaping @Sendable () -> Void) {
        let startThread = monitor.withLock { () -> Bool in
            let queuedBefore = waiting.count
            waiting.append(Job(name: name, body: body))
            if parked > queuedBefore {
                monitor.signal()
                return false
            }
            guard alive < maximumThreads else { return false }
            alive += 1
            return true
        }
        if startThread { Self.startThread { [self] in serve() } }
    }

    /// Runs `body` on a thread named `name` only when one is free now (parked, or the cap allows
    /// a new one); returns whether it does. For work its caller can do itself when no thread is free.
    package func runIfFree(name: StaticString, _ body: @escaping @Sendable () -> Void) -> Bool {
        let (runs, startThread) = monitor.withLock { () -> (Bool, Bool) in
            if parked > waiting.count {
                waiting.append(Job(name: name, body: body))
                monitor.signal()
                return (true, false)
            }
            guard alive < maximumThreads else { return (false, false) }
            alive += 1
            waiting.append(Job(name: name, body: body))
            return (true, true)
        }
        if startThread { Self.startThread { [self] in serve() } }
        return runs
    }

    /// Runs `body` on a new thread of its own that ends with it, outside the cap and never
    /// reused: for bodies that change their thread for good (an unprivileged thread cannot leave
    /// the idle scheduling class).
    package func runAlone(name: StaticString, _ body: @escaping @Sendable () -> Void) {
        Self.startThread {
            Self.setName(name)
            body()
        }
    }

    /// How many threads are alive now (parked ones included).
    package var threadCount: Int { monitor.withLock { alive } }

    /// A thread's life: the bodies that are waiting, then parked until the next or until it retires.
    private func serve() {
        while let job = next() {
            Self.setName(job.name)
            job.body()
        }
        retired()
    }

    /// The next body for this thread, waiting up to ``idleLifetime``; `nil` when the thread retires.
    private func next() -> Job? {
        monitor.withLock { () -> Job? in
            if let job = waiting.popFirst() { return job }
            parked += 1
            defer { parked -= 1 }
            let deadline = ContinuousClock.now + idleLifetime
            while waiting.isEmpty {
                guard monitor.wait(until: deadline) else { break }
            }
            if let job = waiting.popFirst() { return job }
            alive -= 1
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

    /// Starts a detached thread with a 512 KiB stack and `SIGPIPE` blocked.
    private static func startThread(_ body: @escaping @Sendable () -> Void) {
        final class Box: @unchecked Sendable {   // handed to exactly one thread, read once
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
        let rc = pthread_create(&thread, &attributes, { raw in
            let box = Unmanaged<Box>.fromOpaque(raw!).takeRetainedValue()
            haul_block_sigpipe_in_thread()
            box.body()
            return nil
        }, box)
        pthread_attr_destroy(&attributes)
        precondition(rc == 0, "pthread_create failed: \(rc)")
    }
}
