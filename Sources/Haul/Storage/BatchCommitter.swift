import CHaulSys
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import HaulCore

/// Commits finished small files (``FileCommit``) on a thread of its own, so a download's thread
/// moves on to the next download at once, and makes the files that finished meanwhile durable
/// together: one `syncfs` of their file system in place of an `fsync` of each, then the renames,
/// then one `fsync` of each folder.
///
/// An `fsync` of each small file on its writer's thread costs several times the transfer itself;
/// one `syncfs` per batch costs little more than no sync at all. Writers that waited for a group
/// sync themselves would lose that again: the hand-off to this thread is what makes it pay.
///
/// A file goes through here (``takes(_:)``) on Linux, on a file system whose `syncfs` is known to
/// make its data durable, when it is at most ``largestFile`` bytes and its commit replaces
/// nothing. A batch of one is synced with its own `fsync`. A file in a larger batch may wait for
/// other programs' dirty data on the same file system: that is the price of the shared sync.
final class BatchCommitter: Sendable {
    /// The largest file the committer takes. A larger one was written back while it arrived
    /// (``WritebackTracker``), so its own `fsync` finds little to do, and it has its own thread.
    static let largestFile: Int64 = WritebackTracker.interval

    /// Whether `commit` goes to the committer rather than running on the download's thread.
    ///
    /// Not when it may replace a file (`-o`, overwrite) or was found complete on disk: a queued
    /// download of the same name would otherwise start while this one still holds it, and fail
    /// with `locked` instead of running after it.
    static func takes(_ commit: FileCommit) -> Bool {
        #if os(Linux)
        return commit.byteCount <= largestFile && !commit.replaceAllowed && commit.ownsName
            && syncsDurably(fileSystemType: commit.folder.fileSystemType)
        #else
        return false   // no syncfs
        #endif
    }

    /// Whether `syncfs` on a file system of this type (Linux `statfs.f_type`) makes every file's
    /// data and metadata durable and reports write errors: ext2/3/4, XFS, Btrfs, tmpfs (nothing
    /// to make durable). Not FUSE, overlayfs, network file systems and the rest, where `syncfs`
    /// may not reach the backing store: their files are synced one by one.
    static func syncsDurably(fileSystemType: UInt) -> Bool {
        [0xEF53, 0x5846_5342, 0x9123_683E, 0x0102_1994].contains(fileSystemType)
    }

    private struct Entry {
        let commit: FileCommit
        let done: @Sendable (Result<DownloadResult, DownloadError>) -> Void
    }
    /// Files waiting for the next batch, and whether a thread is committing batches.
    private struct State {
        var pending: [Entry] = []
        var serving = false
    }
    private let state = ConditionLock(State())
    /// At most this many files wait for a batch, besides the batch being committed: each holds
    /// two descriptors (the file, with its lock, and its folder), so on a disk slower than the
    /// network a download's thread waits at ``submit(_:done:)`` instead.
    private let maximumWaiting: Int
    private let threads: ThreadPool
    private let syncFileSystem: @Sendable (Int32) -> Int32
    private let checkWritten: @Sendable (Int32) -> Int32

    /// `syncfs(descriptor)`: 0, or the `errno` (`ENOSYS` where there is no syncfs).
    static func syncFileSystem(of descriptor: Int32) -> Int32 {
        haul_syncfs(descriptor) == 0 ? 0 : errno
    }

    /// 0 when no write of the file of `descriptor` failed (unreported to it), else the `errno`.
    static func checkWritten(_ descriptor: Int32) -> Int32 {
        haul_check_written(descriptor) == 0 ? 0 : errno
    }

    /// - Parameters:
    ///   - maximumWaiting: how many files may wait for a batch before a hand-off waits.
    ///   - syncFileSystem: syncs the file system of a descriptor, returning 0 or an `errno`
    ///     (tests count and fail it).
    ///   - checkWritten: reports a failed write of one file after a successful sync, 0 or an `errno`.
    ///   - threads: where the committer's thread runs.
    init(threads: ThreadPool, maximumWaiting: Int = 64,
         syncFileSystem: @escaping @Sendable (Int32) -> Int32 = { BatchCommitter.syncFileSystem(of: $0) },
         checkWritten: @escaping @Sendable (Int32) -> Int32 = { BatchCommitter.checkWritten($0) }) {
        self.threads = threads
        self.maximumWaiting = maximumWaiting
        self.syncFileSystem = syncFileSystem
        self.checkWritten = checkWritten
    }

    /// Commits `commit` soon, on the committer's thread, then calls `done` there with the result.
    /// Waits first while `maximumWaiting` files are waiting already. When the system gives no
    /// thread, the calling thread commits what is waiting (the files do not wait for a thread).
    func submit(_ commit: FileCommit, done: @escaping @Sendable (Result<DownloadResult, DownloadError>) -> Void) {
        let start = state.withLock(waitingWhile: { $0.pending.count >= maximumWaiting }) { state -> Bool in
            state.pending.append(Entry(commit: commit, done: done))
            if state.serving { return false }
            state.serving = true
            return true
        }
        guard start else { return }
        do throws(ResourceError) {
            try threads.run(name: "haul-commit") { self.serve() }
        } catch {
            serve()
        }
    }

    /// Commits batches until none is waiting; what arrives during a batch is the next batch.
    private func serve() {
        while true {
            // Broadcasts: the threads waiting in submit have room now.
            let batch = state.withLockBroadcasting { state -> [Entry] in
                let taken = state.pending
                state.pending = []
                if taken.isEmpty { state.serving = false }
                return taken
            }
            if batch.isEmpty { return }
            commit(batch)
        }
    }

    private func commit(_ batch: [Entry]) {
        for (entry, result) in zip(batch, commit(batch.map(\.commit))) { entry.done(result) }
    }

    /// Commits `commits` now, on the calling thread: the files of a file system with two of them
    /// or more share one sync (``syncTwice(_:)``), the others are synced on their own.
    ///
    /// - Returns: one result for each commit, in order.
    func commit(_ commits: [FileCommit]) -> [Result<DownloadResult, DownloadError>] {
        let byDevice = Dictionary(grouping: commits.indices) { commits[$0].folder.device }
        var results = [Result<DownloadResult, DownloadError>](
            repeating: .failure(DownloadError(.internalError, "a commit got no result")), count: commits.count)
        for indices in byDevice.values {
            let group = indices.map { commits[$0] }
            let synced = group.count > 1 && syncTwice(group[0].partial.descriptor)
            // The sync reports the file system's write errors since its descriptor was opened; one
            // of another file from before then shows only on that file's own descriptor, once:
            // an fsync after it would return 0, so such a file fails here.
            let states = group.map { commit -> FileCommit.DataState in
                guard synced else { return .unsynced }
                let code = checkWritten(commit.partial.descriptor)
                return code == 0 ? .synced : .failed(commit.partial.writeError(code))
            }
            for (index, result) in zip(indices, FileCommit.run(group, data: states)) { results[index] = result }
        }
        return results
    }

    /// Syncs the file system of `descriptor`. The second syncfs, with nothing left to write,
    /// flushes the device's cache once more: the kernel's `sync_filesystem` flushes (`sync_fs`)
    /// before it writes the block device's own dirty buffers, which is where ext4 without a
    /// journal keeps its inode tables. On failure each file is synced on its own instead, which
    /// tells which file an error belongs to.
    private func syncTwice(_ descriptor: Int32) -> Bool {
        syncFileSystem(descriptor) == 0 && syncFileSystem(descriptor) == 0
    }
}
