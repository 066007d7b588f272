import HaulCore
import Synchronization
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Where one download's file goes: the open folder and, for `.file`, the fixed name.
///
/// Opened (and the folder created) before any network I/O, so a folder that cannot be
/// written fails fast with `fileSystem`.
struct DownloadTarget {
    let folder: DestinationFolder
    /// The names the downloader's running downloads are writing.
    let reservations: FileReservations
    /// The exact name for `.file` destinations; `nil` when the server or URL names the file.
    let fixedName: String?

    /// What to do with the response.
    enum Choice: Equatable {
        /// Write the file under `name`; `replaces` says whether an existing file may be replaced.
        case write(name: String, replaces: Bool)
        /// The file exists and the policy is `.skip`.
        case skip(name: String)
        /// The file `name` is this download's, finished by an earlier run (see ``FinishedFileMark``).
        case finished(name: String)
    }

    init(destination: Destination, folders: FolderRegistry = FolderRegistry()) throws(DownloadError) {
        reservations = folders.reservations
        switch destination {
        case .directory(let url):
            folder = try folders.folder(at: folders.path(of: url))
            fixedName = nil
        case .file(let url):
            let path = url.path
            let name = url.lastPathComponent
            guard !name.isEmpty, name != ".", name != "..", name != "/", path.utf8.last != UInt8(ascii: "/") else {
                throw DownloadError(.invalidArgument, "'\(path)' is not a file name")
            }
            let parent = url.deletingLastPathComponent().path
            folder = try folders.folder(at: parent.isEmpty ? "." : parent)
            fixedName = name
        case .contained(let root, let folderText, let name):
            let contained: ContainedPath
            do {
                contained = try ContainedPath(folder: folderText)
                if let name { try ContainedPath.check(component: name) }
            } catch {
                throw DownloadError(.unsafePath, "refused below '\(root.path)': \(error)")
            }
            // Opened afresh by descriptor for each download (never shared by path, which would follow links).
            folder = try DestinationFolder(root: folders.path(of: root), folder: contained, registry: folders)
            fixedName = name
        }
    }

    /// The file URL of `name` in the folder (made without a look at the disk: the plain
    /// initialisers stat the path to learn whether it is a folder, two calls per download).
    /// One parse of the joined path: a folder URL with the name appended took twice as long.
    func fileURL(_ name: String) -> URL {
        let path = folder.path.utf8.last == UInt8(ascii: "/") ? folder.path + name : folder.path + "/" + name
        return URL(fileURLWithPath: path, isDirectory: false)
    }

    /// What a server said about a file's name: its `Content-Disposition` and `Content-Type`.
    struct NameHint: Equatable {
        var contentDisposition: String?
        var contentType: String?
    }

    /// Chooses the final name from the server's `hint` and the URL's path, applies the conflict policy and reserves the name
    /// for this download (give it back with ``release(_:)``).
    ///
    /// A name that a running download of this process holds counts as taken.
    ///
    /// - Throws: `destinationExists` (policy `.fail`), `unsafePath` (a folder or special file is in
    ///   the way), `locked` (an exact name another running download is writing).
    /// - Parameters:
    ///   - urlName: `FileNamer`'s name for `originalURL` alone, when the caller made it already.
    ///   - finished: whether an existing file holds this download, finished by an earlier run;
    ///     asked of the names the policy would look at (not of those another running download of
    ///     this process holds), before the policy applies.
    func choose(hint: NameHint, urlPath: String, urlName: String? = nil, policy: ConflictPolicy,
                finished: (String) -> Bool = { _ in false }) throws(DownloadError) -> Choice {
        if let fixedName {
            if !reservations.isReserved(fixedName, in: folder), finished(fixedName) { return .finished(name: fixedName) }
            try checkReplaceable(fixedName)
            guard reservations.reserve(fixedName, in: folder) else { throw lockedError(fixedName) }
            return .write(name: fixedName, replaces: true)
        }
        let name = FileNamer.name(contentDisposition: hint.contentDisposition, originalURLPath: urlPath,
                                  contentType: hint.contentType, urlName: urlName)
        // Another download may take the chosen name between resolving and reserving: resolve again.
        while true {
            let resolution = ConflictResolver.resolve(name: name, policy: policy, exists: {
                folder.entry($0) != .missing || reservations.isReserved($0, in: folder)
            }, finished: {
                // A name another download of this process is writing may be replaced by it.
                !reservations.isReserved($0, in: folder) && finished($0)
            })
            switch resolution {
            case .use(let chosen):
                if reservations.reserve(chosen, in: folder) { return .write(name: chosen, replaces: false) }
            case .overwrite(let chosen):
                try checkReplaceable(chosen)
                guard reservations.reserve(chosen, in: folder) else { throw lockedError(chosen) }
                return .write(name: chosen, replaces: true)
            case .skip(let chosen):
                return .skip(name: chosen)
            case .finished(let chosen):
                return .finished(name: chosen)
            case .fail(let chosen):
                throw DownloadError(.destinationExists, "'\(folder.path)/\(chosen)' already exists (--on-conflict=fail)")
            }
        }
    }

    /// A name for the file after `taken` appeared under its chosen name while downloading
    /// (policy `.rename` only), reserved like ``choose(hint:urlPath:urlName:policy:finished:)``'s.
    func nextFreeName(after taken: String) -> String? {
        while true {
            let resolution = ConflictResolver.resolve(name: taken, policy: .rename) {
                folder.entry($0) != .missing || reservations.isReserved($0, in: folder)
            }
            guard case .use(let chosen) = resolution else { return nil }
            if reservations.reserve(chosen, in: folder) { return chosen }
        }
    }

    /// Gives back a name reserved by ``choose(hint:urlPath:urlName:policy:finished:)`` or ``nextFreeName(after:)``.
    func release(_ name: String) {
        reservations.release(name, in: folder)
    }

    private func checkReplaceable(_ name: String) throws(DownloadError) {
        switch folder.entry(name) {
        case .missing, .regularFile, .symlink: return
        case .directory, .other:
            throw DownloadError(.unsafePath, "'\(folder.path)/\(name)' exists and is not a regular file")
        }
    }

    private func lockedError(_ name: String) -> DownloadError {
        DownloadError(.locked, "another download is writing '\(folder.path)/\(name)'")
    }
}
