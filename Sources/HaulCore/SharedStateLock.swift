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
///
/// Public, unlike the rest of this module: the compiler specializes a generic inlinable function
/// in another module (here `withLock`, for each state and result) only when it is public; a
/// package one stays a generic call, with the state handled through its type's metadata.
///
/// A value that refers to one storage object: the state and, after it, the mutex, in one
/// allocation (a lock is made for every download several times over).
public struct SharedStateLock<State: Sendable>: @unchecked Sendable {   // the state is only touched with the mutex held
    @usableFromInline let storage: Storage

    /// - Parameter state: the state, which occupies memory (a lock that guards no value holds a
    ///   `Bool`): ThreadSanitizer places an empty value at the address of what follows it, here
    ///   the mutex, and reports every lock as a race with the state.
    @inlinable
    public init(_ state: State) {
        precondition(MemoryLayout<State>.size > 0, "a lock's state occupies memory")
        storage = Storage.make(state)
    }

    /// Runs `body` with the state, holding the lock. Inlinable (as the initializer), so that
    /// callers in other modules get it specialized for their state and result.
    @inlinable
    public func withLock<Result, E: Error>(_ body: (inout State) throws(E) -> Result) throws(E) -> Result {
        try withExtendedLifetime(storage) { () throws(E) -> Result in
            let (state, mutex) = storage.pointers
            pthread_mutex_lock(mutex)
            defer { pthread_mutex_unlock(mutex) }
            return try body(&state.pointee)
        }
    }

    /// The state (the buffer's header) and the mutex (its one element).
    @usableFromInline final class Storage: ManagedBuffer<State, pthread_mutex_t> {
        @inlinable static func make(_ state: State) -> Storage {
            let storage = unsafeDowncast(Storage.create(minimumCapacity: 1) { _ in state }, to: Storage.self)
            var attributes = pthread_mutexattr_t()
            pthread_mutexattr_init(&attributes)
            #if canImport(Glibc)
            pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_ADAPTIVE_NP))
            #endif
            pthread_mutex_init(storage.pointers.mutex, &attributes)
            pthread_mutexattr_destroy(&attributes)
            return storage
        }

        /// Valid while the storage lives.
        @inlinable var pointers: (state: UnsafeMutablePointer<State>, mutex: UnsafeMutablePointer<pthread_mutex_t>) {
            withUnsafeMutablePointers { ($0, $1) }
        }

        deinit {
            pthread_mutex_destroy(pointers.mutex)
        }
    }
}
