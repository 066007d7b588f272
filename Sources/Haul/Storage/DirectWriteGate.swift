#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Keeps a file's direct writes and its writes through the page cache apart in time: direct
/// writes run together (shared), a write through the cache runs alone (exclusive).
///
/// Why: a write of part of a block through the page cache reads the rest of the block from disk
/// first. If a direct write of that whole block is under way at that moment, the page can hold
/// the old bytes, and its writeback later puts them back over the direct write. The other
/// way round is safe: a direct write first writes back the dirty pages of its range, then drops
/// them. Two connections can meet inside one block when one took over the end of the other's
/// range while that one's direct write was under way (see ``DirectStaging``).
final class DirectWriteGate: @unchecked Sendable {   // the rwlock is its own synchronisation
    private let lock = UnsafeMutablePointer<pthread_rwlock_t>.allocate(capacity: 1)

    init() {
        pthread_rwlock_init(lock, nil)
    }

    deinit {
        pthread_rwlock_destroy(lock)
        lock.deallocate()
    }

    /// Runs a direct write (with other direct writes).
    func direct<Result>(_ body: () -> Result) -> Result {
        pthread_rwlock_rdlock(lock)
        defer { pthread_rwlock_unlock(lock) }
        return body()
    }

    /// Runs a write through the page cache: alone when the file has a gate (`nil`: it writes
    /// nothing direct, so nothing to keep apart).
    static func cached<Result>(_ gate: DirectWriteGate?, _ body: () -> Result) -> Result {
        guard let gate else { return body() }
        pthread_rwlock_wrlock(gate.lock)
        defer { pthread_rwlock_unlock(gate.lock) }
        return body()
    }
}
