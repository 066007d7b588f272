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

    init(destination: Destination) throws(DownloadError) {
        switch destination {
        case .directory(let url):
            folder = try DestinationFolder.openOrReuse(path: Self.path(of: url))
            fixedName = nil
        case .file(let url):
            let path = url.path
            let name = url.lastPathComponent
            guard !name.isEmpty, name != ".", name != "..", name != "/", !path.hasSuffix("/") else {
                throw DownloadError(.invalidArgument, "'\(path)' is not a file name")
            }
            let parent = url.deletingLastPathComponent().path
            folder = try DestinationFolder.openOrReuse(path: parent.isEmpty ? "." : parent)
            fixedName = name
        }
    }

    /// `url.path`, remembered for the last folder URL asked about: a list of downloads into one
    /// folder asks about the same URL each time, and `URL.path` decodes it anew (measured: a third
    /// of the cost of opening the target of a small download, more than comparing two URLs).
    private static func path(of url: URL) -> String {
        if let known = lastFolder.withLock({ $0?.url == url ? $0?.path : nil }) { return known }
        let path = url.path
        lastFolder.withLock { $0 = (url, path) }
        return path
    }

    /// The last folder URL ``path(of:)`` was asked about, and its path.
    private static let lastFolder = Mutex<(url: URL, path: String)?>(nil)

    /// The file URL of `name` in the folder (made without a look at the disk: the plain
    /// initialisers stat the path to learn whether it is a folder, two calls per download).
    /// One parse of the joined path: a folder URL with the name appended took twice as long.
    func fileURL(_ name: String) -> URL {
        let path = folder.path.hasSuffix("/") ? folder.path + name : folder.path + "/" + name
        return URL(fileURLWithPath: path, isDirectory: false)
    }

    /// Chooses the final name for `response`, applies the conflict policy and reserves the name
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
    func choose(response: ResponseHead, originalURL: HTTPURL, urlName: String? = nil, policy: ConflictPolicy,
                finished: (String) -> Bool = { _ in false }) throws(DownloadError) -> Choice {
        let reservations = FileReservations.shared
        if let fixedName {
            if !reservations.isReserved(fixedName, in: folder), finished(fixedName) { return .finished(name: fixedName) }
            try checkReplaceable(fixedName)
            guard reservations.reserve(fixedName, in: folder) else { throw lockedError(fixedName) }
            return .write(name: fixedName, replaces: true)
        }
        let name = FileNamer.name(contentDisposition: response.headers["Content-Disposition"],
                                  originalURLPath: originalURL.path, contentType: response.headers["Content-Type"],
                                  urlName: urlName)
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
    /// (policy `.rename` only), reserved like ``choose(response:originalURL:policy:)``'s.
    func nextFreeName(after taken: String) -> String? {
        let reservations = FileReservations.shared
        while true {
            let resolution = ConflictResolver.resolve(name: taken, policy: .rename) {
                folder.entry($0) != .missing || reservations.isReserved($0, in: folder)
            }
            guard case .use(let chosen) = resolution else { return nil }
            if reservations.reserve(chosen, in: folder) { return chosen }
        }
    }

    /// Gives back a name reserved by ``choose(response:originalURL:policy:)`` or ``nextFreeName(after:)``.
    func release(_ name: String) {
        FileReservations.shared.release(name, in: folder)
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
