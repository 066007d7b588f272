import Foundation
import HaulServer
import HaulTestSupport
import Testing
@testable import Haul
import HaulCore
import HaulHTTP

/// Issue 4, "Local faults", with the real `haul` binary: exit codes, the one stderr line, the
/// files left and what the server received, for a missing or read-only folder, a disk that
/// fills up mid-transfer, planted symlinks, an untrusted resume record and a crash before the
/// final rename. Tests that need a real read-only or full file system mount a small tmpfs
/// (root only) and are skipped with the reason elsewhere.
///
/// Exclusive: it mounts small scratch file systems and fills one up mid-transfer.
@Suite(.exclusive, .serialized, .timeLimit(.minutes(1)))
struct HostileLocalCLITests {
    @Test func aMissingFolderIsCreatedWithItsParents() async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { root in
            let outcome = try await haul(["-q", "-d", "a/b/c", server.url("/bytes/5000/x.bin")], in: root)
            #expect(outcome.status == 0, "\(outcome.standardError)")
            #expect(outcome.standardError.isEmpty)
            #expect(listFiles(root) == ["a"])
            let dir = root.appendingPathComponent("a/b/c")
            #expect(listFiles(dir) == ["x.bin"])
            #expect(fileContents(dir.appendingPathComponent("x.bin")) == served(5000))
        }
    }

    @Test(.enabled(if: ScratchMount.isAvailable, "\(ScratchMount.unavailableReason)"),
          arguments: [["-d", "."], ["-d", "sub"], ["-o", "x.bin"]])
    func aReadOnlyFolderExitsThreeBeforeAnyRequest(arguments: [String]) async throws {
        let server = try HaulServer()
        try await ScratchMount.with(size: "1m", readOnly: true) { readOnly in
            let url = server.url("/bytes/100/x.bin")
            let target = readOnly.appendingPathComponent(arguments[1]).standardizedFileURL.path
            let outcome = try await haul(["-q", "--retries=3", arguments[0], target, url], in: readOnly)
            #expect(outcome.status == 3, "\(outcome.standardError)")
            #expect(outcome.errorLines.count == 1, "\(outcome.errorLines)")
            #expect(outcome.errorLines.first?.hasPrefix("haul: \(url): ") == true, "\(outcome.errorLines)")
            #expect(outcome.standardError.contains(readOnly.path))
            #expect(server.requests.isEmpty)
            #expect(listFiles(readOnly) == [])
        }
    }

    @Test(.enabled(if: ScratchMount.isAvailable, "\(ScratchMount.unavailableReason)"))
    func aDiskFullMidTransferExitsThreeWithoutRetryAndResumesOnceThereIsRoom() async throws {
        let server = try HaulServer()
        try await ScratchMount.with(size: "2m") { dir in
            let size: Int64 = 1_500_000
            // Once 400 kB were sent and haul saved a resume record, the server fills the disk.
            let filling = DiskFillingFile(size: size, seed: 3, etag: "\"d1\"", folder: dir, recordName: "file.bin.resume",
                                          fillAfter: 400_000)
            server.route("/file.bin") { try filling.respond(to: $0, on: $1) }
            let url = server.url("/file.bin")
            let arguments = ["--json", "-x", "1", "--retries=3", "--retry-wait=0.05", "-d", dir.path, url]
            let partial = dir.appendingPathComponent("file.bin.part")
            let first = try await haul(arguments, in: dir)

            #expect(filling.fillerBytes ?? 0 > 0, "the filler was never written")
            #expect(first.status == 3, "\(first.standardError)")
            #expect(first.errorLines.count == 1, "\(first.errorLines)")
            #expect(first.errorLines.first?.hasPrefix("haul: \(url): the disk is full") == true, "\(first.errorLines)")
            let events = first.jsonEvents()
            #expect(!eventNames(events).contains("retrying"), "\(eventNames(events))")
            let failed = try #require(events.last)
            #expect(failed["event"] as? String == "failed")
            #expect(jsonInteger(failed["exitCode"]) == 3)
            #expect((failed["error"] as? [String: Any])?["code"] as? String == "diskFull")
            #expect(failed["partial"] as? String == partial.path)
            #expect(server.requests.count == 1, "a full disk was retried")
            #expect(listFiles(dir) == ["file.bin.part", "file.bin.resume", "filler"])

            // Room again: the same command resumes and ends byte-identical.
            try FileManager.default.removeItem(at: dir.appendingPathComponent("filler"))
            server.setResource("/file.bin", HaulServer.Resource(size: size, seed: 3, etag: "\"d1\""))
            let second = try await haul(["-q"] + arguments.dropFirst(), in: dir)
            #expect(second.status == 0, "\(second.standardError)")
            let resumed = try #require(server.requests.dropFirst().first)
            let range = try #require(resumed.header("Range"))
            #expect(range.hasPrefix("bytes=") && range != "bytes=0-", "not resumed: \(range)")
            #expect(resumed.header("If-Range") == "\"d1\"")
            #expect(listFiles(dir) == ["file.bin"])
            #expect(fileContents(dir.appendingPathComponent("file.bin")) == served(Int(size), seed: 3))
        }
    }

    /// Where a symlink to a file outside the folder is planted, and the options that meet it.
    enum Planted: String, CaseIterable, Sendable {
        /// `-o out.bin`, `out.bin` a symlink: replaced by the file.
        case exactOutput
        /// `--on-conflict=overwrite` and the server's name is a symlink: replaced by the file.
        case overwrittenName
        /// The default policy and the server's name is a symlink: the file goes to `x.1.bin`.
        case renamedName
        /// `x.bin.resume` is a symlink: replaced by records, then removed.
        case resumeRecord
    }

    @Test(arguments: Planted.allCases)
    func aPlantedSymlinkIsNeverFollowed(planted: Planted) async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { root in
            let outside = try OutsideFile(in: root)
            let (dir, victim) = (outside.folder, outside.victim)
            let url = server.url("/bytes/1500000/x.bin?rate=3000000")
            let linkName = switch planted {
            case .exactOutput: "out.bin"
            case .overwrittenName, .renamedName: "x.bin"
            case .resumeRecord: "x.bin.resume"
            }
            try outside.plantLink(named: linkName)
            let options = switch planted {
            case .exactOutput: ["-o", dir.appendingPathComponent("out.bin").path]
            case .overwrittenName: ["--on-conflict=overwrite", "-d", dir.path]
            case .renamedName, .resumeRecord: ["-d", dir.path]
            }
            let outcome = try await haul(["-q", "-x", "2"] + options + [url], in: root)

            #expect(outcome.status == 0, "\(outcome.standardError)")
            #expect(outside.isUntouched, "the link's target was written")
            #expect(listFiles(root) == ["dl", "victim.txt"])
            let finalName = planted == .renamedName ? "x.1.bin" : (planted == .exactOutput ? "out.bin" : "x.bin")
            let expected = planted == .renamedName ? ["x.1.bin", "x.bin"] : [finalName]
            #expect(listFiles(dir) == expected)
            #expect(fileContents(dir.appendingPathComponent(finalName)) == served(1_500_000))
            let link = try? FileManager.default.destinationOfSymbolicLink(atPath: dir.appendingPathComponent("x.bin").path)
            #expect(link == (planted == .renamedName ? victim.path : nil))
        }
    }

    @Test(arguments: ["garbage", "truncated", "another file's"])
    func anUntrustedResumeRecordMeansStartingOverWithTheRightBytes(record kind: String) async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { dir in
            let size: Int64 = 1_000_000
            let resource = HaulServer.Resource(size: size, seed: 7, etag: "\"r1\"")
            server.setResource("/file.bin", resource)
            // A partial whose first 400 kB are wrong, beside a record that cannot vouch for it (a
            // record of this URL claiming them, made unreadable; or a valid record of another URL).
            try Data(repeating: 0xEE, count: 400_000).write(to: dir.appendingPathComponent("file.bin.part"))
            let recordURL = dir.appendingPathComponent("file.bin.resume")
            let folder = try DestinationFolder(path: dir.path)
            let other = try HTTPURL.parse(server.url("/other.bin"))
            var claimed = ResumeRecord(url: try HTTPURL.parse(server.url("/file.bin")), finalURL: other, etagHeader: "\"r1\"",
                                       lastModified: nil, totalLength: size, completed: ByteRangeSet([0..<400_000]))
            // Checksums that match the (wrong) bytes on disk: only the record's own checks may refuse it.
            claimed.blockHashes = BlockHash.pieces(of: claimed.completed).map {
                BlockHash(range: $0, crc32c: BlockHashes.crc(of: [UInt8](repeating: 0xEE, count: $0.count)))
            }
            switch kind {
            case "garbage":
                var random = SplitMix64(seed: 9)
                try Data((0..<200).map { _ in UInt8.random(in: 0...255, using: &random) }).write(to: recordURL)
            case "truncated":
                try claimed.save(for: "file.bin", in: folder)
                try Data(contentsOf: recordURL).prefix(10).write(to: recordURL)
            default:
                var foreign = ResumeRecord(url: other, finalURL: other, etagHeader: "\"r1\"", lastModified: nil,
                                       totalLength: size, completed: ByteRangeSet([0..<400_000]))
                foreign.blockHashes = claimed.blockHashes
                try foreign.save(for: "file.bin", in: folder)
            }

            let outcome = try await haul(["-q", "-x", "2", "-d", dir.path, server.url("/file.bin")], in: dir)
            #expect(outcome.status == 0, "\(outcome.standardError)")
            #expect(server.requests.first?.header("Range") == "bytes=0-")
            #expect(server.requests.first?.header("If-Range") == nil)
            #expect(server.bodyBytesSent >= size)
            #expect(listFiles(dir) == ["file.bin"])
            #expect(fileContents(dir.appendingPathComponent("file.bin")) == served(Int(size), seed: 7))
        }
    }

    @Test func aCrashBetweenTheLastWriteAndTheRenameIsFinishedWithoutTheBody() async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { dir in
            // What a kill -9 after the last checkpoint and before the rename leaves, written with
            // the library's own partial-file and record code (that window cannot be hit on purpose).
            let size: Int64 = 3_000_000
            let resource = HaulServer.Resource(size: size, seed: 8, etag: "\"c1\"")
            server.setResource("/file.bin", resource)
            let folder = try DestinationFolder(path: dir.path)
            let partial = try PartialFile.createEmpty("file.bin" + PartialFile.suffix, in: folder)
            try resource.bytes(0..<size).withUnsafeBytes { try partial.write($0, at: 0) }
            try partial.syncData()
            partial.closeKeeping()
            let address = try HTTPURL.parse(server.url("/file.bin"))
            var record = ResumeRecord(url: address, finalURL: address, etagHeader: "\"c1\"", lastModified: nil, totalLength: size,
                                      completed: ByteRangeSet([0..<size]))
            record.blockHashes = BlockHash.pieces(of: record.completed).map {
                BlockHash(range: $0, crc32c: BlockHashes.crc(of: resource.bytes($0)))
            }
            try record.save(for: "file.bin", in: folder)

            let outcome = try await haul(["--json", "-x", "4", "-d", dir.path, server.url("/file.bin")], in: dir)
            #expect(outcome.status == 0, "\(outcome.standardError)")
            #expect(eventNames(outcome.jsonEvents()).last == "finished")
            #expect(server.requests.count == 1)
            #expect(server.requests.first?.header("Range") == "bytes=\(size)-")
            #expect(server.requests.first?.header("If-Range") == "\"c1\"")
            #expect(server.bodyBytesSent == 0)
            #expect(listFiles(dir) == ["file.bin"])
            #expect(fileContents(dir.appendingPathComponent("file.bin")) == served(Int(size), seed: 8))
        }
    }
}
