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
    }

    init(destination: Destination) throws(DownloadError) {
        switch destination {
        case .directory(let url):
            folder = try DestinationFolder(path: url.path)
            fixedName = nil
        case .file(let url):
            let path = url.path
            let name = url.lastPathComponent
            guard !name.isEmpty, name != ".", name != "..", name != "/", !path.hasSuffix("/") else {
                throw DownloadError(.invalidArgument, "'\(path)' is not a file name")
            }
            let parent = url.deletingLastPathComponent().path
            folder = try DestinationFolder(path: parent.isEmpty ? "." : parent)
            fixedName = name
        }
    }

    /// The file URL of `name` in the folder.
    func fileURL(_ name: String) -> URL {
        URL(fileURLWithPath: folder.path).appendingPathComponent(name)
    }

    /// Chooses the final name for `response` and applies the conflict policy.
    ///
    /// - Throws: `destinationExists` (policy `.fail`), `unsafePath` (a folder or special file is in the way).
    func choose(response: ResponseHead, originalURL: HTTPURL, policy: ConflictPolicy) throws(DownloadError) -> Choice {
        if let fixedName {
            switch folder.entry(fixedName) {
            case .missing, .regularFile, .symlink: return .write(name: fixedName, replaces: true)
            case .directory, .other:
                throw DownloadError(.unsafePath, "'\(folder.path)/\(fixedName)' exists and is not a regular file")
            }
        }
        let name = FileNamer.name(contentDisposition: response.headers["Content-Disposition"],
                                  originalURLPath: originalURL.path, contentType: response.headers["Content-Type"])
        let resolution = ConflictResolver.resolve(name: name, policy: policy) { folder.entry($0) != .missing }
        switch resolution {
        case .use(let chosen): return .write(name: chosen, replaces: false)
        case .overwrite(let chosen):
            switch folder.entry(chosen) {
            case .regularFile, .symlink, .missing: return .write(name: chosen, replaces: true)
            case .directory, .other:
                throw DownloadError(.unsafePath, "'\(folder.path)/\(chosen)' exists and is not a regular file")
            }
        case .skip(let chosen): return .skip(name: chosen)
        case .fail(let chosen):
            throw DownloadError(.destinationExists, "'\(folder.path)/\(chosen)' already exists (--on-conflict=fail)")
        }
    }
}
