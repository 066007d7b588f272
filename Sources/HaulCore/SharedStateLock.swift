#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A lock for state that every download's threads touch briefly (the connection pool, the
/// downloader's registry, the progress ticker, name reservations, host slots), with the same
/// `withLock` as `Mutex`.
///
/// Why not `Mutex`: on Linux, Synchronization's `Mutex` is a priority-inheritance futex, whose
/// unlock hands the lock to the sleeping waiter. With more threads than cores that builds a
/// convoy: the lock belongs to a thread that is not running yet, every thread that comes along
/// meanwhile sleeps too, and each hand-over costs two context switches, for critical sections of
/// a few hundred nanoseconds. A plain pthread mutex (adaptive: it spins briefly before sleeping)
/// lets a running thread take a lock that was just released.
/// The writers of one partial file take turns on it too (several connections of one download
/// contend there as many downloads do elsewhere). It is the state lock everywhere else as well:
/// ThreadSanitizer sees a pthread mutex, but not the contended path of `Mutex`, which it reports
/// as races.
package final class SharedStateLock<State: Sendable>: @unchecked Sendable {   // `state` is only touched with `mutex` held
    @usableFromInline let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    @usableFromInline var state: State

    /// - Parameter state: the state, which occupies memory (a lock that guards no value holds a
    ///   `Bool`): ThreadSanitizer places an empty field at the object's own address and reports
    ///   every read of the object's type as a race with the state.
    package init(_ state: State) {
        precondition(MemoryLayout<State>.size > 0, "a lock's state occupies memory")
        self.state = state
        var attributes = pthread_mutexattr_t()
        pthread_mutexattr_init(&attributes)
        #if canImport(Glibc)
        pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_ADAPTIVE_NP))
        #endif
        pthread_mutex_init(mutex, &attributes)
        pthread_mutexattr_destroy(&attributes)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` with the state, holding the lock. Inlinable, so that callers in other modules
    /// get it specialized for their state and result.
    @inlinable
    package func withLock<Result, E: Error>(_ body: (inout State) throws(E) -> Result) throws(E) -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&state)
    }
}
