import Foundation
import HaulCore
import HaulService

/// The daemon's `dir` and `out` options: whatever the service accepts, created as the engine
/// creates it (each folder below the root's descriptor, without following links), is under the
/// root, and nothing appears outside it, not even through the links planted inside it.
enum PathTargets {
    /// The input is `dir`, a 0xFF byte (never in UTF-8), then `out` (absent without the 0xFF).
    static func daemonPaths(_ data: UnsafeRawBufferPointer) {
        let bytes = Array(data)
        let split = bytes.firstIndex(of: 0xFF)
        let directory = String(decoding: bytes[..<(split ?? bytes.endIndex)], as: UTF8.self)
        let name = split.map { String(decoding: bytes[($0 + 1)...], as: UTF8.self) }
        let fixture = PathFixture.shared
        guard let relative = try? fixture.root.relativeFolder(directory) else { return }
        if let name { guard (try? fixture.root.checkFileName(name)) != nil else { return } }
        let folder: ContainedPath
        do { folder = try ContainedPath(folder: relative) } catch {
            FuzzTargets.require(false, "the service's canonical folder is refused: \(error)")
            return
        }
        FuzzTargets.require(lexicallyUnder(fixture.root.path, folder.absolute(in: fixture.root.path) + "/" + (name ?? "f")),
                            "a path that leaves the root once '..' is read: \(Array(relative.unicodeScalars))")
        guard let fd = try? folder.openFolder(below: fixture.rootDescriptor, create: true) else { return }
        defer { close(fd) }
        FuzzTargets.require(fixture.isUnderRoot("/proc/self/fd/\(fd)"), "a folder outside the root: \(Array(relative.unicodeScalars))")
        if let name {
            let file = openat(fd, name, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
            if file >= 0 {
                FuzzTargets.require(fixture.isUnderRoot("/proc/self/fd/\(file)"), "a file outside the root: \(Array(name.unicodeScalars))")
                close(file)
            }
        }
        FuzzTargets.require(fixture.outsideIsEmpty, "something was written through a link: \(Array(directory.unicodeScalars))")
    }

    /// Whether `path` (absolute) stays below `root` once its `.` and `..` components are read as
    /// the kernel reads them, splitting on the `/` byte.
    static func lexicallyUnder(_ root: String, _ path: String) -> Bool {
        var resolved: [ArraySlice<UInt8>] = []
        for component in Array(path.utf8).split(separator: UInt8(ascii: "/")) {
            switch Array(component) {
            case [UInt8(ascii: ".")]: continue
            case [UInt8(ascii: "."), UInt8(ascii: ".")]: _ = resolved.popLast()
            default: resolved.append(component)
            }
        }
        let rootComponents = Array(root.utf8).split(separator: UInt8(ascii: "/"))
        return resolved.count > rootComponents.count && resolved.starts(with: rootComponents)
    }
}

/// The root the `daemon-paths` target writes into, with `root/link` and `root/l\u{600}` linking
/// to a folder outside it: made once per process, removed when the process exits.
final class PathFixture: Sendable {
    static let shared = PathFixture()
    static let folder = FileManager.default.temporaryDirectory.appendingPathComponent("haul-fuzz-paths-\(getpid())")

    let root: DownloadRoot
    let rootDescriptor: Int32
    /// The root with its links resolved, as `realpath` reports what is under it.
    let rootReal: String
    let outside: String

    private init() {
        let folder = Self.folder
        try? FileManager.default.removeItem(at: folder)
        atexit { try? FileManager.default.removeItem(at: PathFixture.folder) }
        let rootURL = folder.appendingPathComponent("root")
        outside = folder.appendingPathComponent("outside").path
        do {
            try FileManager.default.createDirectory(at: rootURL, withIntermediateDirectories: true)
            try FileManager.default.createDirectory(atPath: outside, withIntermediateDirectories: true)
            for link in ["link", "l\u{600}"] {
                try FileManager.default.createSymbolicLink(atPath: rootURL.path + "/" + link, withDestinationPath: outside)
            }
            rootDescriptor = try ContainedPath.openRoot(rootURL.path)
        } catch {
            fatalError("the fuzz fixture's root could not be made in \(folder.path): \(error)")
        }
        root = DownloadRoot(rootURL)
        rootReal = rootURL.resolvingSymlinksInPath().path
    }

    /// Whether `path` resolves (`realpath`) to the root or below it.
    func isUnderRoot(_ path: String) -> Bool {
        guard let resolved = realpath(path, nil) else { return false }
        defer { free(resolved) }
        let text = String(cString: resolved)
        return text == rootReal || text.utf8.starts(with: (rootReal + "/").utf8)
    }

    /// Whether the folder the links point at is still empty.
    var outsideIsEmpty: Bool {
        ((try? FileManager.default.contentsOfDirectory(atPath: outside)) ?? []).isEmpty
    }
}
