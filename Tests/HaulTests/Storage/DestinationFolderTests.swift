import Foundation
import HaulTestSupport
import Testing
@testable import Haul
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// ``FolderRegistry/folder(at:)``: downloads into one folder share its descriptor while it is the
/// same folder; two downloaders share nothing.
@Suite("Destination folders")
struct DestinationFolderTests {
    @Test("a folder in use is shared by the downloads into it")
    func sharedWhileHeld() throws {
        let folders = FolderRegistry()
        try withTemporaryDirectory { dir in
            let first = try folders.folder(at: dir.path)
            let second = try folders.folder(at: dir.path)
            #expect(first === second)
            #expect(try FolderRegistry().folder(at: dir.path) !== first, "another downloader opens its own")
            #expect(folders.sync(for: first.identity) === first.shared)
            #expect(FolderRegistry().sync(for: first.identity) !== first.shared)
        }
    }

    /// The target remembers the last folder URL's path: each URL must still get its own folder.
    @Test("targets in two folders, one after the other, each open their own")
    func targetsAlternateBetweenFolders() throws {
        let folders = FolderRegistry()
        try withTemporaryDirectory { dir in
            let a = dir.appendingPathComponent("a b"), b = dir.appendingPathComponent("b%20c")
            for url in [a, b, a, b] {
                let target = try DownloadTarget(destination: .directory(url), folders: folders)
                #expect(target.folder.path == url.path)
                #expect(FileManager.default.fileExists(atPath: url.path))
            }
            #expect(listFiles(dir).sorted() == ["a b", "b%20c"])
        }
    }

    /// A folder whose permissions changed is checked again (a write permission taken away then
    /// fails the next download before its request, as it fails a first one).
    @Test("a folder whose mode changed is opened and checked again; one unchanged is still shared")
    func changedModeIsCheckedAgain() throws {
        let folders = FolderRegistry()
        try withTemporaryDirectory { dir in
            let path = dir.appendingPathComponent("out").path
            let first = try folders.folder(at: path)
            #expect(try folders.folder(at: path) === first)
            #expect(chmod(path, 0o700) == 0)
            let second = try folders.folder(at: path)
            #expect(second !== first)
            #expect(second.identity == first.identity)
            #expect(try folders.folder(at: path) === second)
        }
    }

    /// A descriptor kept across a replacement would write into the old folder, out of sight.
    @Test("a folder replaced at its path is opened afresh, and files land in the new one")
    func replacedFolder() throws {
        let folders = FolderRegistry()
        try withTemporaryDirectory { dir in
            let path = dir.appendingPathComponent("out").path
            let old = try folders.folder(at: path)
            try FileManager.default.moveItem(atPath: path, toPath: dir.appendingPathComponent("moved").path)
            let new = try folders.folder(at: path)   // created again
            #expect(new !== old)
            #expect(new.identity != old.identity)
            let fd = openat(new.descriptor, "f", O_CREAT | O_WRONLY, 0o644)
            #expect(fd >= 0)
            close(fd)
            #expect(listFiles(URL(fileURLWithPath: path)) == ["f"])
            #expect(listFiles(dir.appendingPathComponent("moved")).isEmpty)
        }
    }
}
