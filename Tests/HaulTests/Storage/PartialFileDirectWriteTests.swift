import Foundation
import HaulTestSupport
import Testing
@testable import Haul

/// Whole blocks written past the page cache (`O_DIRECT`) end up on disk byte for byte; what
/// cannot go direct (a partial block, unaligned memory or offset, another file system, a file
/// that lost its name) is left to the caller, who writes it through the page cache.
@Suite("Direct writes of a partial file", .throttled, .timeLimit(.minutes(1)))
struct PartialFileDirectWriteTests {
    static func bytes(_ count: Int, seed: Int) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: ($0 &* 131) ^ ($0 >> 9) &+ seed) }
    }

    /// Writes `content` from memory `misalignment` bytes past a 4 KiB boundary at `offset`:
    /// direct as far as `writeDirect` goes, the rest through the page cache. Returns how many
    /// bytes went direct.
    static func write(_ content: [UInt8], misalignment: Int, at offset: Int64, to partial: PartialFile) throws -> Int {
        let memory = UnsafeMutableRawBufferPointer.allocate(byteCount: content.count + misalignment + 1,
                                                            alignment: PartialFile.directAlignment)
        defer { memory.deallocate() }
        let slice = UnsafeMutableRawBufferPointer(rebasing: memory[misalignment..<(misalignment + content.count)])
        content.withUnsafeBytes { slice.copyMemory(from: $0) }
        let direct = try partial.writeDirect(UnsafeRawBufferPointer(slice), at: offset)
        try partial.write(UnsafeRawBufferPointer(rebasing: slice[direct...]), at: offset + Int64(direct))
        return direct
    }

    @Test(arguments: [4096, 8192, 65_536, 1_048_576, 4096 + 1, 100])
    func wholeBlocksFromAlignedMemoryGoDirect(count: Int) throws {
        try withTemporaryDirectory { dir in
            let folder = try DownloadTarget(destination: .directory(dir)).folder
            let direct = PartialFile.takesDirectWrites(fileSystemType: folder.fileSystemType)
            for (misalignment, offset) in [(0, Int64(0)), (0, Int64(8192)), (3, Int64(0)), (0, Int64(10))] {
                let name = "f-\(count)-\(misalignment)-\(offset).bin.part"
                let partial = try PartialFile.createEmpty(name, in: folder)
                let content = Self.bytes(count, seed: misalignment + Int(offset))
                let went = try Self.write(content, misalignment: misalignment, at: offset, to: partial)
                partial.closeKeeping()
                // Only whole blocks, from aligned memory, at an aligned offset, where the file system takes it.
                let whole = count % PartialFile.directAlignment == 0 && misalignment == 0 && offset % 4096 == 0
                #expect(went == (direct && whole ? count : 0), "\(count) bytes, \(misalignment) off, at \(offset)")
                let data = try Data(contentsOf: dir.appendingPathComponent(name))
                #expect(data.count == Int(offset) + count)
                #expect(data.suffix(count) == Data(content))
            }
        }
    }

    /// The direct descriptor is the file opened again by name: when another file has taken that
    /// name, nothing goes direct, the bytes go to the locked file through its own descriptor, and
    /// the other file is untouched.
    @Test func aFileThatLostItsNameGetsNoDirectWrites() throws {
        try withTemporaryDirectory { dir in
            let folder = try DownloadTarget(destination: .directory(dir)).folder
            let partial = try PartialFile.createEmpty("n.bin.part", in: folder)
            let part = dir.appendingPathComponent("n.bin.part"), moved = dir.appendingPathComponent("moved.bin")
            try FileManager.default.moveItem(at: part, to: moved)
            try Data("someone else's".utf8).write(to: part)
            #expect(partial.directDescriptor() == nil)
            let content = Self.bytes(65_536, seed: 3)
            #expect(try Self.write(content, misalignment: 0, at: 0, to: partial) == 0)
            partial.closeKeeping()
            #expect(try Data(contentsOf: moved) == Data(content))
            #expect(try Data(contentsOf: part) == Data("someone else's".utf8))
        }
    }

    /// Reserving the blocks gives the file its length (zeros until written).
    @Test func reservingGivesTheFileItsLength() throws {
        try withTemporaryDirectory { dir in
            let folder = try DownloadTarget(destination: .directory(dir)).folder
            let partial = try PartialFile.createEmpty("r.bin.part", in: folder)
            try partial.reserve(length: 3 << 20)
            if PartialFile.takesDirectWrites(fileSystemType: folder.fileSystemType) {   // ext4 and XFS reserve
                #expect(partial.length == 3 << 20)
            }
            partial.closeKeeping()
        }
    }

    /// A reservation that runs out of space (ENOSPC or EDQUOT) after it grew the file is reported
    /// as `diskFull`, and the file is given back its former length with its bytes untouched.
    @Test(arguments: [ENOSPC, EDQUOT])
    func aReservationThatRunsOutOfSpaceGivesTheSpaceBack(code: Int32) throws {
        try withTemporaryDirectory { dir in
            let folder = try DownloadTarget(destination: .directory(dir)).folder
            let partial = try PartialFile.createEmpty("f.bin.part", in: folder)
            let content = Self.bytes(10_000, seed: 5)
            try content.withUnsafeBytes { try partial.write($0, at: 0) }
            var asked: Int64?
            let error = #expect(throws: DownloadError.self) {
                try partial.reserve(length: 1 << 30) { descriptor, length in
                    asked = length
                    _ = ftruncate(descriptor, off_t(length / 2))   // what fallocate reserved before the disk filled
                    return code
                }
            }
            #expect(error?.code == .diskFull)
            #expect(asked == 1 << 30)
            #expect(partial.length == 10_000)
            partial.closeKeeping()
            #expect(try Data(contentsOf: dir.appendingPathComponent("f.bin.part")) == Data(content))
        }
    }

    /// Any other failure to reserve (a file system that cannot, EOPNOTSUPP) is not an error: the
    /// download goes on with the file as it is (its writes report a full disk if one comes).
    @Test func aFileSystemThatCannotReserveLeavesTheFileAsItIs() throws {
        try withTemporaryDirectory { dir in
            let folder = try DownloadTarget(destination: .directory(dir)).folder
            let partial = try PartialFile.createEmpty("o.bin.part", in: folder)
            let content = Self.bytes(5_000, seed: 6)
            try content.withUnsafeBytes { try partial.write($0, at: 0) }
            try partial.reserve(length: 1 << 20) { _, _ in EOPNOTSUPP }
            #expect(partial.length == 5_000)
            partial.closeKeeping()
            #expect(try Data(contentsOf: dir.appendingPathComponent("o.bin.part")) == Data(content))
        }
    }

    @Test func onlyExt4AndXFSTakeDirectWrites() {
        #expect(PartialFile.takesDirectWrites(fileSystemType: 0xEF53))
        #expect(PartialFile.takesDirectWrites(fileSystemType: 0x5846_5342))
        for other: UInt in [0x0102_1994 /* tmpfs */, 0x9123_683E /* btrfs */, 0x6969 /* NFS */, 0x6573_5546 /* FUSE */, 0] {
            #expect(!PartialFile.takesDirectWrites(fileSystemType: other))
        }
    }
}
