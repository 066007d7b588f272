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
import HaulCore

/// The folder a ``DownloadService`` writes into, and the rule that keeps every download inside
/// it: a download's folder is a ``ContainedPath`` below the root (checked by Unicode scalars:
/// no `..`, `.`, control character or `/` hidden in a component), none of its existing
/// components a symbolic link, and its file name is one such component. The engine opens the
/// folder relative to the root's descriptor without following links (``Destination/contained(root:folder:name:)``).
package struct DownloadRoot: Sendable {
    /// The root, absolute and without a trailing slash.
    package let path: String
    /// What looks at the folders and files below the root.
    let fileSystem: any ServiceFileSystem

    /// - Parameters:
    ///   - url: the root folder (made absolute against the working directory).
    ///   - fileSystem: what looks at the file system (tests hold it; see ``SystemFileSystem``).
    package init(_ url: URL, fileSystem: any ServiceFileSystem = SystemFileSystem()) {
        self.fileSystem = fileSystem
        var path = url.standardizedFileURL.path
        while path.utf8.count > 1 && path.utf8.last == UInt8(ascii: "/") {
            path = String(decoding: path.utf8.dropLast(), as: UTF8.self)   // the byte: "\u{600}/" is one Character
        }
        self.path = path
    }

    /// The root as a URL.
    var url: URL { URL(fileURLWithPath: path, isDirectory: true) }

    /// The folder a `directory` option names, relative to the root, in canonical form (`""` for
    /// the root itself). An absolute path is accepted when it is the root or below it.
    ///
    /// - Throws: `unsafePath` for a component ``ContainedPath`` refuses, an absolute path
    ///   elsewhere, or a symbolic link or file among the components that exist.
    package func relativeFolder(_ directory: String) throws(ServiceError) -> String {
        var text = directory
        if directory.utf8.first == UInt8(ascii: "/") {
            let rootBytes = path == "/" ? "" : path
            guard directory.utf8.starts(with: rootBytes.utf8),
                  [nil, UInt8(ascii: "/")].contains(directory.utf8.dropFirst(rootBytes.utf8.count).first) else {
                throw ServiceError(.unsafePath, "the folder '\(directory)' is outside the download root \(path)")
            }
            // By bytes: an index inside a Character (the root's last scalar and a "/" may be one) would round down.
            text = String(decoding: directory.utf8.dropFirst(rootBytes.utf8.count), as: UTF8.self)
        }
        let folder: ContainedPath
        do {
            folder = try ContainedPath(folder: text)
        } catch {
            throw ServiceError(.unsafePath, "the folder '\(directory)' is refused: \(error)")
        }
        try checkNoLinks(folder.relative, shown: directory)
        return folder.relative
    }

    /// Checks a file name: one ``ContainedPath`` component of at most 240 bytes (room for the
    /// engine's suffixes).
    ///
    /// - Throws: `unsafePath` otherwise.
    package func checkFileName(_ name: String) throws(ServiceError) {
        do {
            try ContainedPath.check(component: name)
        } catch {
            throw ServiceError(.unsafePath, "the file name is refused: \(error)")
        }
        guard name.utf8.count <= 240 else {
            throw ServiceError(.unsafePath, "the file name is longer than 240 bytes")
        }
    }

    /// The absolute folder of a relative one.
    package func absolute(_ relative: String) -> String {
        relative.isEmpty ? path : (path == "/" ? "/" : path + "/") + relative
    }

    /// Walks the existing components of `relative` below the root, relative to each parent's
    /// descriptor, without following links.
    ///
    /// - Throws: `unsafePath` when a component is refused, is a symbolic link or not a folder.
    package func checkNoLinks(_ relative: String, shown: String) throws(ServiceError) {
        do {
            try fileSystem.checkExisting(try ContainedPath(folder: relative), belowRoot: path)
        } catch {
            throw ServiceError(.unsafePath, "the folder '\(shown)' is refused: \(error)")
        }
    }

    /// Whether something (a symbolic link included) is at `name` in the folder `relative`.
    func contains(_ name: String, inFolder relative: String) -> Bool {
        fileSystem.entryExists(atPath: absolute(relative) + "/" + name)
    }
}

/// What a ``DownloadService`` asks of the file system before it adds or starts a download: a
/// replaceable boundary, so that a test can hold it as a slow mount would and show that nothing
/// else waits for it.
package protocol ServiceFileSystem: Sendable {
    /// Walks the existing components of `folder` below the root at `rootPath`, relative to each
    /// parent's descriptor, without following links.
    ///
    /// - Throws: a ``ContainedPath/Refusal`` when a component is a symbolic link or not a folder,
    ///   or the root cannot be opened.
    func checkExisting(_ folder: ContainedPath, belowRoot rootPath: String) throws(ContainedPath.Refusal)

    /// Whether something (a symbolic link included) is at `path` (`lstat`).
    func entryExists(atPath path: String) -> Bool
}

/// The system's file system, through descriptors and `lstat`.
package struct SystemFileSystem: ServiceFileSystem {
    /// The system's file system.
    package init() {}

    /// Opens the root and walks `folder` below it (``ContainedPath/checkExisting(below:)``).
    package func checkExisting(_ folder: ContainedPath, belowRoot rootPath: String) throws(ContainedPath.Refusal) {
        let root = try ContainedPath.openRoot(rootPath)
        defer { close(root) }
        try folder.checkExisting(below: root)
    }

    /// `lstat` succeeds on `path`.
    package func entryExists(atPath path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0
    }
}
