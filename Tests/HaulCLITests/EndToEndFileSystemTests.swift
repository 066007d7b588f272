import Foundation
import HaulServer
import HaulTestSupport
import Testing

/// Local file trouble with the real `haul` binary: exit 3, and nothing written where it must not be.
@Suite(.throttled, .timeLimit(.minutes(1)))
struct EndToEndFileSystemTests {
    @Test func aSymlinkedPartialFileIsNotFollowed() async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { root in
            let outside = try OutsideFile(in: root)
            let dir = outside.folder
            try outside.plantLink(named: "x.bin.part")
            let outcome = try await haul(["-q", "--retries=0", "-d", dir.path, server.url("/bytes/5000/x.bin")], in: root)
            #expect(outside.isUntouched, "the symlink's target was written")
            #expect(listFiles(root) == ["dl", "victim.txt"])
            // The planted link is replaced by a fresh partial file, never written through.
            #expect(outcome.status == 0, "\(outcome.standardError)")
            #expect(listFiles(dir) == ["x.bin"])
            #expect(fileContents(dir.appendingPathComponent("x.bin")) == served(5000))
        }
    }

    @Test func outputOntoADirectoryExitsThree() async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { dir in
            let folder = dir.appendingPathComponent("folder")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: false)
            let url = server.url("/bytes/100/f.bin")
            let outcome = try await haul(["--retries=0", "-o", folder.path, url], in: dir)
            #expect(outcome.status == 3, "\(outcome.standardError)")
            #expect(outcome.errorLines == ["haul: \(url): '\(folder.path)' exists and is not a regular file"])
            #expect(listFiles(dir) == ["folder"])
            #expect(listFiles(folder) == [])
        }
    }

    @Test func aDirectoryThatIsAFileExitsThree() async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { dir in
            let file = dir.appendingPathComponent("plain")
            try Data("x".utf8).write(to: file)
            let url = server.url("/bytes/100/f.bin")
            let outcome = try await haul(["--retries=0", "-d", file.path, url], in: dir)
            #expect(outcome.status == 3, "\(outcome.standardError)")
            #expect(outcome.errorLines == ["haul: \(url): '\(file.path)' exists and is not a folder"])
            #expect(listFiles(dir) == ["plain"])
            #expect(fileContents(file) == Data("x".utf8))
        }
    }

    @Test func controlCharactersInTheNameAreRemoved() async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { dir in
            let disposition = "attachment; filename*=UTF-8''a%1B%5B31mb%0Ac.txt"
            let outcome = try await haul(["-d", dir.path, server.url("/bytes/10/cd.bin?cd=\(queryEncoded(disposition))")], in: dir)
            #expect(outcome.status == 0, "\(outcome.standardError)")
            #expect(listFiles(dir) == ["a[31mbc.txt"])
            #expect(!outcome.standardError.contains("\u{1B}"))
        }
    }
}
