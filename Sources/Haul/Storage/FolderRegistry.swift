#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import HaulCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The folders one downloader's downloads write into: the open ones (shared while in use), one
/// ``FolderSync`` per folder, and the names being written (``FileReservations``).
final class FolderRegistry: Sendable {
    /// The final names running downloads are writing.
    let reservations = FileReservations()
    /// The folders open now, by path; an entry goes when its last download lets go of it.
    private let open = SharedStateLock<[String: WeakFolder]>([:])
    private let syncs = SharedStateLock<[FolderIdentity: FolderSync]>([:])
    /// The last folder URL ``path(of:)`` was asked about, and its path.
    private let lastFolder = SharedStateLock<(url: URL, path: String)?>(nil)

    private struct WeakFolder { weak var folder: DestinationFolder? }

    /// The folder at `path`, opened, created (and its parents) when missing, checked writable.
    ///
    /// A folder that a running download has open already, still at `path` with the same device
    /// and inode, mode, owner and group, is shared instead of opened again (one `stat` instead of
    /// five calls per download). A folder whose mode, owner or group changed is opened and
    /// checked again, so a `chmod` that takes the write permission away fails the next download
    /// before any network I/O, as it would a first one.
    ///
    /// - Throws: `fileSystem` when it cannot be created, opened or written.
    func folder(at path: String) throws(DownloadError) -> DestinationFolder {
        var info = stat()
        if stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR,
           let known = open.withLock({ $0[path]?.folder }), known.stillMatches(info) {
            return known
        }
        let made = try DestinationFolder(path: path, registry: self)
        open.withLock { folders in
            folders = folders.filter { $0.value.folder != nil }
            folders[path] = WeakFolder(folder: made)
        }
        return made
    }

    /// The one ``FolderSync`` for the folder of this identity (device and inode).
    func sync(for identity: FolderIdentity) -> FolderSync {
        syncs.withLock { syncs in
            if let existing = syncs[identity] { return existing }
            let made = FolderSync()
            syncs[identity] = made
            return made
        }
    }

    /// `url.path`, remembered for the last folder URL asked about: a list of downloads into one
    /// folder asks about the same URL each time, and `URL.path` decodes it anew.
    func path(of url: URL) -> String {
        if let known = lastFolder.withLock({ $0?.url == url ? $0?.path : nil }) { return known }
        let path = url.path
        lastFolder.withLock { $0 = (url, path) }
        return path
    }
}
