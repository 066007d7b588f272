import Synchronization
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
final class FolderSync: @unchecked Sendable {   // all state is under `monitor`
    private let syncFolder: @Sendable (Int32) -> Int32
    private let monitor = Monitor()
    /// Sync requests so far; the last request every finished sync covers; whether one runs.
    private var requested = 0
    private var covered = 0
    private var syncing = false
    private var lastResult: Int32 = 0

    /// - Parameter sync: syncs a folder descriptor, returning 0 or an `errno` (tests slow it down).
    init(sync: @escaping @Sendable (Int32) -> Int32 = { fsync($0) == 0 ? 0 : errno }) {
        self.syncFolder = sync
    }

    /// Makes every change to the folder made before this call durable, with one `fsync(descriptor)`
    /// for every caller waiting at that time. Returns 0, or the `errno` of the sync that covered it.
    func sync(descriptor: Int32) -> Int32 {
        monitor.withLock {
            requested += 1
            let mine = requested
            while covered < mine {
                if syncing {
                    monitor.wait()
                    continue
                }
                syncing = true
                let covers = requested
                let result = monitor.unlocked { syncFolder(descriptor) }
                syncing = false
                covered = covers
                lastResult = result
                monitor.broadcast()
            }
            return lastResult
        }
    }
}
