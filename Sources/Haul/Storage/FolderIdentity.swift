#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A folder's device and inode: the same folder reached through two paths has one identity.
///
/// Keys what this process shares per folder (``FolderSync``, ``FileReservations``) and groups the
/// commits of a batch by folder (``FileCommit``). Two integers, compared and hashed without the
/// text that a formatted `"device:inode"` cost for every download.
struct FolderIdentity: Hashable, Sendable {
    let device: UInt64
    let inode: UInt64

    /// The identity of the folder `info` describes (from `stat` or `fstat`).
    init(_ info: stat) {
        self.init(device: UInt64(truncatingIfNeeded: info.st_dev), inode: UInt64(info.st_ino))
    }

    init(device: UInt64, inode: UInt64) {
        self.device = device
        self.inode = inode
    }
}
