import Foundation
import HaulTestSupport
import Testing
@testable import Haul

/// ``Destination/contained(root:folder:name:)``: the engine opens the folder below the root one
/// component at a time without following links, and refuses what ``ContainedPath`` refuses.
@Suite("Contained destinations")
struct ContainedDestinationTests {
    @Test func aFolderBelowTheRootIsMadeAndOpened() throws {
        try withTemporaryDirectory { dir in
            let target = try DownloadTarget(destination: .contained(root: dir, folder: "a/\u{301}b", name: "f.bin"))
            #expect(target.folder.path == dir.path + "/a/\u{301}b")
            #expect(target.fixedName == "f.bin")
            #expect(listFiles(dir.appendingPathComponent("a")) == ["\u{301}b"])
        }
    }

    @Test(arguments: [("../\u{301}x", nil), ("", "../\u{301}x.txt"), ("link/\u{301}x", nil), ("l\u{600}/x", nil),
                      ("", "l\u{600}/x.txt"), ("\u{2025}", nil), ("a\u{FF0F}b", nil), ("", "")] as [(String, String?)])
    func whatLeavesTheRootIsUnsafe(folder: String, name: String?) throws {
        try withTemporaryDirectory { dir in
            let root = dir.appendingPathComponent("root"), outside = dir.appendingPathComponent("outside")
            try FileManager.default.createDirectory(at: root, withIntermediateDirectories: false)
            try FileManager.default.createDirectory(at: outside, withIntermediateDirectories: false)
            for link in ["link", "l\u{600}"] {
                try FileManager.default.createSymbolicLink(atPath: root.path + "/" + link, withDestinationPath: outside.path)
            }
            #expect {
                try DownloadTarget(destination: .contained(root: root, folder: folder, name: name))
            } throws: { ($0 as? DownloadError)?.code == .unsafePath }
            #expect(listFiles(dir) == ["outside", "root"])
            #expect(listFiles(outside).isEmpty)
        }
    }
}
