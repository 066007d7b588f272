import CHaulSys
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Runs `body` on a new detached OS thread (with SIGPIPE blocked: see `haul_block_sigpipe_in_thread`).
///
/// Transfers block in `poll`/`recv`/`pwrite`; they get threads of their own so they never
/// block Swift's cooperative pool.
func spawnThread(name: String, _ body: @escaping @Sendable () -> Void) {
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
