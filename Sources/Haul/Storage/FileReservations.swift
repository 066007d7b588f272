import Synchronization
import HaulCore

/// The final paths that running downloads of this process are writing, so that two downloads
/// never pick the same name (or partial file) in one folder.
///
/// Another process is kept out by the lock on the partial file (a later issue); within one
/// process this registry is the lock.
final class FileReservations: Sendable {
    private let paths = SharedStateLock<Set<Key>>([])

    /// A name in a folder (a key made without joining two strings, which allocated).
    private struct Key: Hashable, Sendable {
        let folder: FolderIdentity
        let name: String
    }

    /// Reserves `name` in `folder`; `false` when a running download holds it already.
    func reserve(_ name: String, in folder: DestinationFolder) -> Bool {
        let key = Self.key(name, folder)   // built outside the lock: 16 downloads queued on it
        return paths.withLock { $0.insert(key).inserted }
    }

    /// Whether a running download holds `name` in `folder`.
    func isReserved(_ name: String, in folder: DestinationFolder) -> Bool {
        let key = Self.key(name, folder)
        return paths.withLock { $0.contains(key) }
    }

    /// Gives `name` back.
    func release(_ name: String, in folder: DestinationFolder) {
        let key = Self.key(name, folder)
        _ = paths.withLock { $0.remove(key) }
    }

    private static func key(_ name: String, _ folder: DestinationFolder) -> Key {
        Key(folder: folder.identity, name: name)
    }
}
