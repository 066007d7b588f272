import Foundation
import HaulTestSupport
import Testing
@testable import Haul
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@Suite(.throttled) struct ResumeRecordFileTests {
    private static func bytes(_ url: URL) throws -> [UInt8] { try Array(Data(contentsOf: url)) }

    private static func write(_ bytes: [UInt8], to url: URL) throws { try Data(bytes).write(to: url) }

    private static func mode(_ url: URL) -> mode_t {
        var info = stat()
        _ = lstat(url.path, &info)
        return info.st_mode & 0o777
    }

    @Test(arguments: ResumeRecordSamples.all)
    func saveThenLoad(record: ResumeRecord) throws {
        try withTemporaryDirectory { dir in
            let folder = try DestinationFolder(path: dir.path)
            try record.save(for: "big.iso", in: folder)
            #expect(ResumeRecord.load(for: "big.iso", in: folder) == .valid(record))
            #expect(listFiles(dir) == ["big.iso.resume"])
            #expect(try Self.bytes(dir.appendingPathComponent("big.iso.resume")) == record.encoded())
            #expect(Self.mode(dir.appendingPathComponent("big.iso.resume")) == 0o600)
        }
    }

    @Test func saveReplacesAnEarlierRecord() throws {
        try withTemporaryDirectory { dir in
            let folder = try DestinationFolder(path: dir.path)
            try ResumeRecordSamples.full.save(for: "f", in: folder)
            try ResumeRecordSamples.minimal.save(for: "f", in: folder)
            #expect(ResumeRecord.load(for: "f", in: folder) == .valid(ResumeRecordSamples.minimal))
            #expect(listFiles(dir) == ["f.resume"])
        }
    }

    /// A 512 GiB download written in 4 MiB pieces keeps 131,072 block hashes: its record (about
    /// 5 MiB) must load again, where the old 4 MiB limit refused it.
    @Test func theRecordOfAHugeFileLoadsAgain() async throws {
        try await withTemporaryDirectory { dir in
            let folder = try DestinationFolder(path: dir.path)
            let block = BlockHash.blockSize
            let pieces = 131_072
            let length = Int64(pieces) * block
            let full = ResumeRecordSamples.full
            let record = ResumeRecord(redactedURL: full.redactedURL, redactedFinalURL: full.redactedFinalURL,
                                      resourceKey: full.resourceKey, etag: full.etag, lastModified: nil,
                                      totalLength: length, completed: ByteRangeSet([0..<length]), expectedChecksum: nil,
                                      blockHashes: (0..<Int64(pieces)).map { BlockHash(range: ($0 * block)..<(($0 + 1) * block), crc32c: UInt32(truncatingIfNeeded: $0)) })
            // Seconds of work in a debug build: on a thread of its own, not the cooperative pool's.
            let (size, loaded) = try await onOwnThread {
                try record.save(for: "huge.bin", in: folder)
                let size = try FileManager.default.attributesOfItem(atPath: dir.appendingPathComponent("huge.bin.resume").path)[.size] as? Int
                return (size, ResumeRecord.load(for: "huge.bin", in: folder))
            }
            #expect((size ?? 0) > 4 << 20)
            #expect(loaded == .valid(record))
        }
    }

    @Test func aRecordLargerThanTheLimitIsNotRead() throws {
        try withTemporaryDirectory { dir in
            let folder = try DestinationFolder(path: dir.path)
            let url = dir.appendingPathComponent("f.resume")
            #expect(FileManager.default.createFile(atPath: url.path, contents: nil))
            #expect(truncate(url.path, off_t(ResumeRecord.maximumFileSize + 1)) == 0)
            guard case .invalid(let reason) = ResumeRecord.load(for: "f", in: folder) else {
                Issue.record("a record over the limit was read")
                return
            }
            #expect(reason.contains("too large"))
        }
    }

    @Test func missingRecordIsMissing() throws {
        try withTemporaryDirectory { dir in
            let folder = try DestinationFolder(path: dir.path)
            #expect(ResumeRecord.load(for: "nothing", in: folder) == .missing)
        }
    }

    @Test(arguments: [
        ([], "is truncated"),
        (Array("garbage\n".utf8), "is damaged"),
        (Array("haul-resume 9\n".utf8), "format version 9"),
        (Array(ResumeRecordSamples.full.encoded().dropLast(5)), "is truncated"),
    ] as [([UInt8], String)])
    func garbageIsInvalid(content: [UInt8], phrase: String) throws {
        try withTemporaryDirectory { dir in
            let folder = try DestinationFolder(path: dir.path)
            try Self.write(content, to: dir.appendingPathComponent("f.resume"))
            guard case .invalid(let reason) = ResumeRecord.load(for: "f", in: folder) else {
                Issue.record("garbage was not invalid")
                return
            }
            #expect(reason.contains(phrase), "\(reason)")
            #expect(reason.contains("\(dir.path)/f.resume"), "\(reason)")
        }
    }

    @Test func symlinkedRecordIsNotFollowedOnLoad() throws {
        try withTemporaryDirectory { dir in
            let folder = try DestinationFolder(path: dir.path)
            let elsewhere = dir.appendingPathComponent("elsewhere")
            try Self.write(ResumeRecordSamples.full.encoded(), to: elsewhere)
            try FileManager.default.createSymbolicLink(atPath: dir.appendingPathComponent("f.resume").path, withDestinationPath: elsewhere.path)
            guard case .invalid(let reason) = ResumeRecord.load(for: "f", in: folder) else {
                Issue.record("a symlinked record was loaded")
                return
            }
            #expect(reason.contains("symbolic link"))
        }
    }

    @Test func plantedSymlinkIsReplacedNotFollowed() throws {
        try withTemporaryDirectory { dir in
            let folder = try DestinationFolder(path: dir.path)
            let victim = dir.appendingPathComponent("victim")
            try Self.write(Array("precious".utf8), to: victim)
            try FileManager.default.createSymbolicLink(atPath: dir.appendingPathComponent("f.resume").path, withDestinationPath: victim.path)
            try ResumeRecordSamples.full.save(for: "f", in: folder)
            #expect(try Self.bytes(victim) == Array("precious".utf8))
            #expect(folder.entry("f.resume") == .regularFile)
            #expect(ResumeRecord.load(for: "f", in: folder) == .valid(ResumeRecordSamples.full))
        }
    }

    @Test func plantedTemporarySymlinkIsNotFollowed() throws {
        try withTemporaryDirectory { dir in
            let folder = try DestinationFolder(path: dir.path)
            let victim = dir.appendingPathComponent("victim")
            try Self.write(Array("precious".utf8), to: victim)
            try FileManager.default.createSymbolicLink(atPath: dir.appendingPathComponent("f" + ResumeRecord.temporarySuffix).path, withDestinationPath: victim.path)
            try ResumeRecordSamples.full.save(for: "f", in: folder)
            #expect(try Self.bytes(victim) == Array("precious".utf8))
            #expect(listFiles(dir) == ["f.resume", "victim"])
            #expect(ResumeRecord.load(for: "f", in: folder) == .valid(ResumeRecordSamples.full))
        }
    }

    @Test func leftoverTemporaryFileIsOverwritten() throws {
        try withTemporaryDirectory { dir in
            let folder = try DestinationFolder(path: dir.path)
            let leftover = dir.appendingPathComponent("f" + ResumeRecord.temporarySuffix)
            try Self.write(Array(repeating: UInt8(ascii: "x"), count: 10_000), to: leftover)
            chmod(leftover.path, 0o644)
            try ResumeRecordSamples.minimal.save(for: "f", in: folder)
            #expect(listFiles(dir) == ["f.resume"])
            #expect(try Self.bytes(dir.appendingPathComponent("f.resume")) == ResumeRecordSamples.minimal.encoded())
            #expect(Self.mode(dir.appendingPathComponent("f.resume")) == 0o600)
        }
    }

    @Test func notARegularFileIsInvalidAndNeverBlocks() throws {
        try withTemporaryDirectory { dir in
            let folder = try DestinationFolder(path: dir.path)
            try FileManager.default.createDirectory(at: dir.appendingPathComponent("d.resume"), withIntermediateDirectories: false)
            #expect(mkfifo(dir.appendingPathComponent("p.resume").path, 0o600) == 0)
            for name in ["d", "p"] {
                guard case .invalid = ResumeRecord.load(for: name, in: folder) else {
                    Issue.record("\(name).resume was not invalid")
                    continue
                }
            }
        }
    }

    @Test func saveOverAFolderFailsAndLeavesNoTemporaryFile() throws {
        try withTemporaryDirectory { dir in
            let folder = try DestinationFolder(path: dir.path)
            try FileManager.default.createDirectory(at: dir.appendingPathComponent("f.resume"), withIntermediateDirectories: false)
            #expect {
                try ResumeRecordSamples.full.save(for: "f", in: folder)
            } throws: { error in
                (error as? DownloadError)?.code == .fileSystem
            }
            #expect(listFiles(dir) == ["f.resume"])
        }
    }

    @Test func inconsistentRecordIsNotSaved() throws {
        try withTemporaryDirectory { dir in
            let folder = try DestinationFolder(path: dir.path)
            var record = ResumeRecordSamples.full
            record.completed.insert(0..<(record.totalLength + 1))
            #expect {
                try record.save(for: "f", in: folder)
            } throws: { error in
                (error as? DownloadError)?.code == .internalError
            }
            #expect(listFiles(dir) == [])
        }
    }

    @Test func removeDeletesRecordAndTemporaryFile() throws {
        try withTemporaryDirectory { dir in
            let folder = try DestinationFolder(path: dir.path)
            ResumeRecord.remove(for: "f", in: folder)   // nothing there: fine
            try ResumeRecordSamples.full.save(for: "f", in: folder)
            try Self.write([1], to: dir.appendingPathComponent("f" + ResumeRecord.temporarySuffix))
            try Self.write([2], to: dir.appendingPathComponent("f.part"))
            ResumeRecord.remove(for: "f", in: folder)
            #expect(listFiles(dir) == ["f.part"])
            #expect(ResumeRecord.load(for: "f", in: folder) == .missing)
        }
    }
}
