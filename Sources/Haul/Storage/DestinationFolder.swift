import CHaulSys
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import HaulCore

/// An open folder that downloads land in; every file operation is relative to it (`openat`,
/// `renameat`), so a name can never reach outside it.
final class DestinationFolder: Sendable {
    let path: String
    let descriptor: Int32
    /// The folder's device and inode: the same folder reached through two paths has one identity.
    let identity: FolderIdentity
    /// The device of the file system the folder is on.
    var device: UInt64 { identity.device }
    /// The folder's mode, owner and group when it was opened and checked writable: a folder that
    /// still has them is still writable for this process (short of an ACL change or a read-only
    /// remount, which the create of the download's file reports).
    private let permissions: Permissions
    /// The type of that file system (Linux `statfs.f_type`; 0 when unknown).
    let fileSystemType: UInt
    /// Shared by every download of the downloader into this folder.
    let shared: FolderSync

    /// What decides whether this process may write into a folder, as `stat` tells it.
    private struct Permissions: Equatable {
        let mode: mode_t
        let owner: uid_t
        let group: gid_t

        init(_ info: stat) {
            mode = info.st_mode
            owner = info.st_uid
            group = info.st_gid
        }
    }
    /// Opens `path`, creating it (and its parents) when missing, and checks it is writable.
    ///
    /// - Throws: `fileSystem` when it cannot be created, opened or written.
    convenience init(path: String, registry: FolderRegistry = FolderRegistry()) throws(DownloadError) {
        try Self.createDirectories(path)
        let fd = open(path, O_RDONLY | haul_o_directory() | haul_o_cloexec())
        guard fd >= 0 else {
            throw DownloadError(.fileSystem, "cannot open the folder '\(path)': \(errnoText())")
        }
        try self.init(path: path, descriptor: fd, registry: registry)
    }

    /// Opens `folder` below `root`, one component at a time relative to its parent without
    /// following links (``ContainedPath/openFolder(below:create:)``), creating what is missing,
    /// and checks it is writable.
    ///
    /// - Throws: `unsafePath` when a component is a symbolic link or not a folder; `fileSystem`
    ///   when the root or the folder cannot be opened, created or written.
    convenience init(root: String, folder: ContainedPath, registry: FolderRegistry = FolderRegistry()) throws(DownloadError) {
        let fd: Int32
        do {
            let rootDescriptor = try ContainedPath.openRoot(root)
            defer { close(rootDescriptor) }
            fd = try folder.openFolder(below: rootDescriptor, create: true)
        } catch {
            throw DownloadError(error.reason == .unsafe ? .unsafePath : .fileSystem, error.description)
        }
        try self.init(path: folder.absolute(in: root), descriptor: fd, registry: registry)
    }

    /// Takes the open folder `fd` (closed on failure) and checks it is writable.
    private init(path: String, descriptor fd: Int32, registry: FolderRegistry) throws(DownloadError) {
        self.path = path
        guard faccessat(fd, ".", W_OK | X_OK, 0) == 0 else {
            let reason = errnoText()
            close(fd)
            throw DownloadError(.fileSystem, "cannot write into the folder '\(path)': \(reason)")
        }
        var info = stat()
        _ = fstat(fd, &info)
        identity = FolderIdentity(info)
        permissions = Permissions(info)
        fileSystemType = UInt(haul_file_system_type(fd))
        shared = registry.sync(for: identity)
        descriptor = fd
    }

    deinit { close(descriptor) }

    /// Whether `info` (a `stat` of this folder's path) shows this folder, still with the mode,
    /// owner and group it had when it was checked writable.
    func stillMatches(_ info: stat) -> Bool {
        identity == FolderIdentity(info) && permissions == Permissions(info)
    }

    private static func createDirectories(_ path: String) throws(DownloadError) {
        var isDirectory = stat()
        if stat(path, &isDirectory) == 0 {
            guard (isDirectory.st_mode & S_IFMT) == S_IFDIR else {
                throw DownloadError(.fileSystem, "'\(path)' exists and is not a folder")
            }
            return
        }
        // Split on the `/` byte: a `/` followed by a combining mark is one `Character`.
        var prefix = path.utf8.first == UInt8(ascii: "/") ? "/" : ""
        for component in path.utf8.split(separator: UInt8(ascii: "/")) {
            prefix += String(decoding: component, as: UTF8.self) + "/"
            if mkdir(prefix, 0o755) != 0 && errno != EEXIST {
                throw DownloadError(.fileSystem, "cannot create the folder '\(prefix)': \(errnoText())")
            }
        }
    }

    /// What is at `name` in this folder (symlinks are not followed).
    func entry(_ name: String) -> EntryKind {
        var info = stat()
        guard fstatat(descriptor, name, &info, AT_SYMLINK_NOFOLLOW) == 0 else { return .missing }
        switch info.st_mode & S_IFMT {
        case S_IFREG: return .regularFile
        case S_IFLNK: return .symlink
        case S_IFDIR: return .directory
        default: return .other
        }
    }

    /// The kinds of entry ``entry(_:)`` reports.
    enum EntryKind: Equatable { case missing, regularFile, symlink, directory, other }

    /// Removes the regular file or symlink `name` (never follows it). Missing is fine.
    func remove(_ name: String) throws(DownloadError) {
        let rc = unlinkat(descriptor, name, 0)
        let code = errno
        if rc != 0 && code != ENOENT {
            throw DownloadError(.fileSystem, "cannot remove '\(path)/\(name)': \(errnoText(code))")
        }
    }

    /// Renames `from` to `to` inside the folder, atomically. With `replace == false` an existing
    /// `to` is never replaced (`destinationExists`).
    func rename(_ from: String, to: String, replace: Bool) throws(DownloadError) {
        let rc = replace ? renameat(descriptor, from, descriptor, to) : haul_rename_noreplace(descriptor, from, descriptor, to)
        let code = errno
        guard rc == 0 else {
            if code == EEXIST { throw DownloadError(.destinationExists, "'\(path)/\(to)' appeared while downloading; it was left as it is") }
            if code == ENOSPC || code == EDQUOT {   // a full folder: the complete file is kept for the next run
                throw DownloadError(.diskFull, "cannot rename '\(from)' to '\(to)' in '\(path)': \(errnoText(code))")
            }
            throw DownloadError(.fileSystem, "cannot rename '\(from)' to '\(to)' in '\(path)': \(errnoText(code))")
        }
    }

    /// Flushes the folder's entries (the rename) to disk, in one sync with the other downloads
    /// into this folder that finish at the same time.
    func sync() throws(DownloadError) {
        let code = shared.sync(descriptor: descriptor)
        if code != 0 && code != EINVAL {
            throw DownloadError(.fileSystem, "cannot sync the folder '\(path)': \(errnoText(code))")
        }
    }
}
