import Foundation
import HaulServer
import HaulTestSupport
import Testing

/// `--on-conflict` with the real `haul` binary when the chosen name already exists.
@Suite(.throttled, .timeLimit(.minutes(1)))
struct EndToEndConflictTests {
    static let old = Data("old contents\n".utf8)

    /// A folder holding `name.bin` with ``old`` in it.
    static func seeded(_ dir: URL) throws -> URL {
        let file = dir.appendingPathComponent("name.bin")
        try old.write(to: file)
        return file
    }

    @Test func failExitsTenAndKeepsTheFile() async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { dir in
            let existing = try Self.seeded(dir)
            let url = server.url("/bytes/1000/name.bin")
            let outcome = try await haul(["--on-conflict=fail", "-d", dir.path, url], in: dir)
            #expect(outcome.status == 10)
            #expect(outcome.standardOutput.isEmpty)
            #expect(outcome.errorLines == ["haul: \(url): '\(existing.path)' already exists (--on-conflict=fail)"])
            #expect(listFiles(dir) == ["name.bin"])
            #expect(fileContents(existing) == Self.old)
        }
    }

    @Test func renameIsTheDefaultAndNumbersTheName() async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { dir in
            let existing = try Self.seeded(dir)
            let url = server.url("/bytes/1000/name.bin")
            let explicit = try await haul(["-q", "--on-conflict=rename", "-d", dir.path, url], in: dir)
            #expect(explicit.status == 0)
            #expect(explicit.standardError.isEmpty)
            #expect(listFiles(dir) == ["name.1.bin", "name.bin"])
            // Another version of the file (another ETag) is another file.
            let byDefault = try await haul(["--json", "-d", dir.path, url + "?seed=3"], in: dir)
            #expect(byDefault.status == 0)
            #expect(listFiles(dir) == ["name.1.bin", "name.2.bin", "name.bin"])
            #expect(byDefault.jsonEvents().last?["file"] as? String == dir.appendingPathComponent("name.2.bin").path)
            #expect(fileContents(existing) == Self.old)
            #expect(fileContents(dir.appendingPathComponent("name.1.bin")) == served(1000))
            #expect(fileContents(dir.appendingPathComponent("name.2.bin")) == served(1000, seed: 3))
        }
    }

    /// Rerunning a command whose download finished (a list interrupted halfway, run again) leaves
    /// the file as it is under `rename` (the default) and `fail`: it is the same file, unchanged on
    /// the server. (`skip` and `overwrite` do what they say; the library's tests cover them.)
    @Test(arguments: ["rename", "fail"])
    func aRerunRecognisesTheFinishedFile(policy: String) async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { dir in
            let url = server.url("/bytes/1000/name.bin")
            let first = try await haul(["-q", "-d", dir.path, url], in: dir)
            #expect(first.status == 0)
            let file = dir.appendingPathComponent("name.bin")
            let inode = try #require((try FileManager.default.attributesOfItem(atPath: file.path))[.systemFileNumber] as? UInt64)
            let again = try await haul(["--on-conflict=\(policy)", "-d", dir.path, url], in: dir)
            #expect(again.status == 0)
            #expect(again.errorLines == ["name.bin: complete already (an earlier run finished it), not downloaded again"])
            let json = try await haul(["--json", "--on-conflict=\(policy)", "-d", dir.path, url], in: dir)
            #expect(json.status == 0)
            let finished = try #require(json.jsonEvents().last)
            #expect(finished["event"] as? String == "finished")
            #expect(finished["alreadyComplete"] as? Bool == true)
            #expect(finished["skipped"] == nil)
            #expect(finished["file"] as? String == file.path)
            #expect(finished["bytes"] as? Int == 1000)
            #expect(listFiles(dir) == ["name.bin"])
            #expect(fileContents(file) == served(1000))
            #expect((try FileManager.default.attributesOfItem(atPath: file.path))[.systemFileNumber] as? UInt64 == inode)
        }
    }

    @Test func skipExitsZeroAndKeepsTheFile() async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { dir in
            let existing = try Self.seeded(dir)
            let url = server.url("/bytes/1000/name.bin")
            let outcome = try await haul(["--on-conflict=skip", "-d", dir.path, url], in: dir)
            #expect(outcome.status == 0)
            #expect(outcome.standardOutput.isEmpty)
            #expect(outcome.errorLines == ["name.bin: exists, skipped"])
            #expect(listFiles(dir) == ["name.bin"])
            #expect(fileContents(existing) == Self.old)

            let json = try await haul(["--json", "--on-conflict=skip", "-d", dir.path, url], in: dir)
            #expect(json.status == 0)
            let finished = try #require(json.jsonEvents().last)
            #expect(finished["event"] as? String == "finished")
            #expect(finished["skipped"] as? Bool == true)
            #expect(finished["file"] as? String == existing.path)
            #expect(fileContents(existing) == Self.old)
        }
    }

    @Test func overwriteReplacesTheFile() async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { dir in
            let existing = try Self.seeded(dir)
            let outcome = try await haul(["-q", "--on-conflict=overwrite", "-d", dir.path, server.url("/bytes/1000/name.bin")], in: dir)
            #expect(outcome.status == 0)
            #expect(listFiles(dir) == ["name.bin"])
            #expect(fileContents(existing) == served(1000))
        }
    }
}
