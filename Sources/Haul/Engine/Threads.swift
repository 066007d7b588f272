import CHaulSys
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Runs `body` on an OS thread of its own (with SIGPIPE blocked: see `haul_block_sigpipe_in_thread`).
///
/// Transfers block in `poll`/`recv`/`pwrite`; they get threads of their own so they never
/// block Swift's cooperative pool. A thread that finished its work waits a few seconds for the
/// next one before it exits, so many short downloads do not pay a thread creation each
/// (see ``ThreadPool``).
func spawnThread(name: String, _ body: @escaping @Sendable () -> Void) {
    ThreadPool.shared.run(body)
}

/// Threads for blocking work, reused: a finished thread parks for up to ``idleLifetime`` waiting
/// for the next body, then exits. There is no cap: every body starts at once, on a parked thread
/// when one is free, else on a new one.
final class ThreadPool: @unchecked Sendable {   // all state is under `monitor`
    static let shared = ThreadPool()

    /// How long a thread without work stays for the next body.
    let idleLifetime: Duration = .seconds(5)
    private let monitor = Monitor()
    private var waiting: [@Sendable () -> Void] = []
    private var parked = 0

    /// Starts `body` now, on a parked thread or a new one.
    func run(_ body: @escaping @Sendable () -> Void) {
        let handed = monitor.withLock { () -> Bool in
            guard parked > waiting.count else { return false }
            waiting.append(body)
            monitor.signal()
            return true
        }
        if !handed { start(body) }
    }

    /// Starts `body` now on a new thread that ends with it, never reused: for bodies that change
    /// their thread for good (an unprivileged thread cannot leave the idle scheduling class).
    func runAlone(_ body: @escaping @Sendable () -> Void) {
        start(body, pooled: false)
    }

    private func start(_ body: @escaping @Sendable () -> Void, pooled: Bool = true) {
        final class Box: @unchecked Sendable {   // handed to exactly one thread, read once
            let pool: ThreadPool?
            let body: @Sendable () -> Void
            init(_ pool: ThreadPool?, _ body: @escaping @Sendable () -> Void) { self.pool = pool; self.body = body }
        }
        let box = Unmanaged.passRetained(Box(pooled ? self : nil, body)).toOpaque()
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
            if let pool = box.pool { pool.serve(first: box.body) } else { box.body() }
            return nil
        }, box)
        pthread_attr_destroy(&attributes)
        precondition(rc == 0, "pthread_create failed: \(rc)")
    }

    /// A thread's life: its first body, then whatever arrives while it is parked.
    private func serve(first: @escaping @Sendable () -> Void) {
        var next: (@Sendable () -> Void)? = first
        while let body = next {
            body()
            next = monitor.withLock { () -> (@Sendable () -> Void)? in
                parked += 1
                defer { parked -= 1 }
                let deadline = ContinuousClock.now + idleLifetime
                while waiting.isEmpty {
                    guard monitor.wait(until: deadline) else { break }
                }
                return waiting.isEmpty ? nil : waiting.removeFirst()
            }
        }
        ReceiveBuffers.shared.trim()   // idle for a while: nothing needs the spare buffers soon
    }
}
