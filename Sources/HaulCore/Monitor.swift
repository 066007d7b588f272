#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A mutex with a condition variable: the building block of ``ConditionLock``, which holds the
/// state it guards. Waits use the monotonic clock. The mutex is adaptive on Linux (it spins
/// briefly before sleeping), as ``SharedStateLock``'s, for the writers that take a
/// ``ConditionLock`` per buffer.
final class Monitor: @unchecked Sendable {   // the pthread objects are only used through their functions
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    init() {
        var mutexAttributes = pthread_mutexattr_t()
        pthread_mutexattr_init(&mutexAttributes)
        #if canImport(Glibc)
        pthread_mutexattr_settype(&mutexAttributes, Int32(PTHREAD_MUTEX_ADAPTIVE_NP))
        #endif
        pthread_mutex_init(mutex, &mutexAttributes)
        pthread_mutexattr_destroy(&mutexAttributes)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        #if os(Linux)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        #endif
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    /// Runs `body` holding the lock.
    func withLock<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }

    /// Runs `body` with the lock released (call with the lock held).
    func unlocked<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        pthread_mutex_unlock(mutex)
        defer { pthread_mutex_lock(mutex) }
        return try body()
    }

    /// Wakes every waiter (with the lock held or not).
    func broadcast() {
        pthread_cond_broadcast(condition)
    }

    /// Wakes one waiter (with the lock held or not).
    func signal() {
        pthread_cond_signal(condition)
    }

    /// Sleeps (call with the lock held; it is released while sleeping) until signalled or until
    /// `deadline`. Returns `false` once the deadline has passed. Wakes may be spurious: callers
    /// recheck their condition.
    func wait(until deadline: ContinuousClock.Instant) -> Bool {
        let remaining = deadline - ContinuousClock.now
        if remaining <= .zero { return false }
        #if os(Linux)
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let (seconds, attoseconds) = remaining.components
        var nanoseconds = Int(now.tv_nsec) + Int(attoseconds / 1_000_000_000)
        var wake = timespec(tv_sec: now.tv_sec + Int(seconds) + nanoseconds / 1_000_000_000, tv_nsec: 0)
        nanoseconds %= 1_000_000_000
        wake.tv_nsec = nanoseconds
        _ = pthread_cond_timedwait(condition, mutex, &wake)
        #else
        let (seconds, attoseconds) = remaining.components
        var relative = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
        _ = pthread_cond_timedwait_relative_np(condition, mutex, &relative)
        #endif
        return true
    }

    /// Sleeps (lock held, released while sleeping) until signalled. Wakes may be spurious.
    func wait() {
        pthread_cond_wait(condition, mutex)
    }
}
