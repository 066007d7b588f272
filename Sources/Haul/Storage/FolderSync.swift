#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import HaulCore

/// What every download of a downloader into one folder shares: one `fsync` of the folder for all
/// the renames made before it started (a group commit).
///
/// With many small files into one folder, each download syncing the folder on its own would cost
/// a folder sync per file. Creates and renames are left to the kernel's lock of the folder.
final class FolderSync: Sendable {
    /// Sync requests so far; the last request every finished sync covers; whether one runs; and
    /// the result of the last sync.
    private struct State {
        var requested = 0
        var covered = 0
        var syncing = false
        var lastResult: Int32 = 0
    }

    private let syncFolder: @Sendable (Int32) -> Int32
    private let state = ConditionLock(State())

    /// - Parameter sync: syncs a folder descriptor, returning 0 or an `errno` (tests slow it down).
    init(sync: @escaping @Sendable (Int32) -> Int32 = { fsync($0) == 0 ? 0 : errno }) {
        self.syncFolder = sync
    }

    /// The sync requests made so far (a test waits for callers to arrive with it).
    var requestsSoFar: Int { state.withLock { $0.requested } }

    /// Makes every change to the folder made before this call durable, with one `fsync(descriptor)`
    /// for every caller waiting at that time. Returns 0, or the `errno` of the sync that covered it.
    func sync(descriptor: Int32) -> Int32 {
        let mine = state.withLock { state -> Int in
            state.requested += 1
            return state.requested
        }
        // Waits while another caller's sync runs; then either a sync covered this request, or
        // this caller syncs, for every request made so far.
        let (covering, covered) = state.withLock(waitingWhile: { $0.covered < mine && $0.syncing }) { state -> (Int?, Int32) in
            guard state.covered < mine else { return (nil, state.lastResult) }
            state.syncing = true
            return (state.requested, 0)
        }
        guard let covering else { return covered }
        let result = syncFolder(descriptor)
        state.withLockBroadcasting { state in
            state.syncing = false
            state.covered = covering
            state.lastResult = result
        }
        return result
    }
}
