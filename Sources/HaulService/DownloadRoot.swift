#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The folder a ``DownloadService`` writes into, and the rule that keeps every download inside
/// it: a download's folder is a path below the root with no `..`, no empty or `.` component
/// and no symbolic link among its existing components; its file name is one plain component.
struct DownloadRoot: Sendable {
    /// The root, absolute and without a trailing slash.
    let path: String

    /// - Parameter url: the root folder (made absolute against the working directory).
    init(_ url: URL) {
        var path = url.standardizedFileURL.path
        while path.count > 1 && path.hasSuffix("/") { path.removeLast() }
        self.path = path
    }

    /// The root as a URL.
    var url: URL { URL(fileURLWithPath: path, isDirectory: true) }

    /// The folder a `directory` option names, relative to the root, in canonical form (`""` for
    /// the root itself). An absolute path is accepted when it is the root or below it.
    ///
    /// - Throws: `unsafePath` for `..`, `.`, empty components, NUL, control characters, an
    ///   absolute path elsewhere, or a symbolic link among the components that exist.
    func relativeFolder(_ directory: String) throws(ServiceError) -> String {
        var text = directory
        if text.hasPrefix("/") {
            guard text == path || text.hasPrefix(path == "/" ? "/" : path + "/") else {
                throw ServiceError(.unsafePath, "the folder '\(directory)' is outside the download root \(path)")
            }
            text = String(text.dropFirst(path == "/" ? 1 : path.count))
        }
        let components = text.split(separator: "/", omittingEmptySubsequences: true)
        for component in components {
            guard component != "..", component != ".", component.utf8.count <= 255,
                  !component.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
                throw ServiceError(.unsafePath, "the folder '\(directory)' leaves the download root or is not a plain path")
            }
        }
        let relative = components.joined(separator: "/")
        try checkNoLinks(relative, shown: directory)
        return relative
    }

    /// Checks a file name: one component, not `.` or `..`, no `/`, NUL or control characters.
    ///
    /// - Throws: `unsafePath` otherwise.
    func checkFileName(_ name: String) throws(ServiceError) {
        guard !name.isEmpty, name != ".", name != "..", !name.contains("/"), name.utf8.count <= 240,
              !name.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
            throw ServiceError(.unsafePath, "the file name '\(name)' is not one plain name inside the download root")
        }
    }

    /// The absolute folder of a relative one.
    func absolute(_ relative: String) -> String {
        relative.isEmpty ? path : (path == "/" ? "/" : path + "/") + relative
    }

    /// Walks the existing components of `relative` below the root without following links.
    ///
    /// - Throws: `unsafePath` when one is a symbolic link or not a folder.
    func checkNoLinks(_ relative: String, shown: String) throws(ServiceError) {
        var current = path
        for component in relative.split(separator: "/") {
            current += (current == "/" ? "" : "/") + component
            var info = stat()
            guard lstat(current, &info) == 0 else { return }   // missing from here on: made later, as folders
            if (info.st_mode & S_IFMT) == S_IFLNK {
                throw ServiceError(.unsafePath, "the folder '\(shown)' goes through a symbolic link")
            }
            if (info.st_mode & S_IFMT) != S_IFDIR {
                throw ServiceError(.unsafePath, "the folder '\(shown)' goes through a file that is not a folder")
            }
        }
    }
}
