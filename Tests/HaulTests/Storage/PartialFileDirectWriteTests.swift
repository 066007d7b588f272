import Foundation
import HaulTestSupport
import Testing
@testable import Haul

/// A body written past the page cache (`O_DIRECT`) ends up on disk byte for byte, whatever its
/// length and wherever it sits in memory; what cannot go direct goes through the page cache.
@Suite("Direct writes of a partial file", .exclusive, .serialized, .timeLimit(.minutes(1)))
struct PartialFileDirectWriteTests {
    static func bytes(_ count: Int, seed: Int) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: ($0 &* 131) ^ ($0 >> 9) &+ seed) }
    }

    /// Writes `content` from memory `misalignment` bytes past a 4 KiB boundary, at `offset`.
    static func write(_ content: [UInt8], misalignment: Int, at offset: Int64, to partial: PartialFile) throws -> Bool {
        let memory = UnsafeMutableRawBufferPointer.allocate(byteCount: content.count + misalignment + 1,
                                                            alignment: PartialFile.directAlignment)
        defer { memory.deallocate() }
        let slice = UnsafeMutableRawBufferPointer(rebasing: memory[misalignment..<(misalignment + content.count)])
        content.withUnsafeBytes { slice.copyMemory(from: $0) }
        return try partial.writeBypassingCache(UnsafeRawBufferPointer(slice), at: offset)
    }

    @Test(arguments: [1, 4095, 4096, 4097, 65_536, 65_536 + 337, 1_048_576 + 11])
    func everyLengthLandsWholeAlignedOrNot(count: Int) throws {
        try withTemporaryDirectory { dir in
            let folder = try DownloadTarget(destination: .directory(dir)).folder
            let direct = PartialFile.takesDirectWrites(fileSystemType: folder.fileSystemType)
            for misalignment in [0, 3, 512] {
                let name = "f-\(count)-\(misalignment).bin.part"
                let partial = try PartialFile.createEmpty(name, in: folder)
                let content = Self.bytes(count, seed: misalignment)
                let bypassed = try Self.write(content, misalignment: misalignment, at: 0, to: partial)
                partial.closeKeeping()
                // Whole blocks go direct where the file system takes it; a body under one block cannot.
                #expect(bypassed == (direct && count >= PartialFile.directAlignment), "\(count) bytes, \(misalignment) off")
                #expect(try Data(contentsOf: dir.appendingPathComponent(name)) == Data(content))
            }
        }
    }

    /// Unaligned bytes are copied into the aligned space the caller offers (a receive buffer's
    /// free space), which is what reaches the file.
    @Test func unalignedBytesGoThroughTheOfferedSpace() throws {
        try withTemporaryDirectory { dir in
            let folder = try DownloadTarget(destination: .directory(dir)).folder
            let partial = try PartialFile.createEmpty("o.bin.part", in: folder)
            let content = Self.bytes(65_536 + 77, seed: 4)
            let source = UnsafeMutableRawBufferPointer.allocate(byteCount: content.count + 1, alignment: 4096)
            let spare = UnsafeMutableRawBufferPointer.allocate(byteCount: 65_536, alignment: 4096)
            defer { source.deallocate(); spare.deallocate() }
            let slice = UnsafeMutableRawBufferPointer(rebasing: source[1...])
            content.withUnsafeBytes { slice.copyMemory(from: $0) }
            var offered: [Int] = []
            let bypassed = try partial.writeBypassingCache(UnsafeRawBufferPointer(slice), at: 0) { count in
                offered.append(count)
                return UnsafeMutableRawBufferPointer(rebasing: spare[0..<count])
            }
            partial.closeKeeping()
            let direct = PartialFile.takesDirectWrites(fileSystemType: folder.fileSystemType)
            #expect(bypassed == direct)
            #expect(offered == (direct ? [65_536] : []))
            #expect(try Data(contentsOf: dir.appendingPathComponent("o.bin.part")) == Data(content))
        }
    }

    /// An offset inside a block cannot be written direct: the page cache takes it, the bytes
    /// before it stay as they were.
    @Test func anUnalignedOffsetGoesThroughThePageCache() throws {
        try withTemporaryDirectory { dir in
            let folder = try DownloadTarget(destination: .directory(dir)).folder
            let partial = try PartialFile.createEmpty("u.bin.part", in: folder)
            let first = Self.bytes(10, seed: 1), second = Self.bytes(20_000, seed: 2)
            try first.withUnsafeBytes { try partial.write($0, at: 0) }
            #expect(try Self.write(second, misalignment: 0, at: 10, to: partial) == false)
            partial.closeKeeping()
            #expect(try Data(contentsOf: dir.appendingPathComponent("u.bin.part")) == Data(first + second))
        }
    }

    /// The direct write opens the file again by name: when another file has taken that name,
    /// the bytes go to the locked file through its own descriptor and the other file is untouched.
    @Test func aFileThatLostItsNameIsWrittenThroughItsOwnDescriptor() throws {
        try withTemporaryDirectory { dir in
            let folder = try DownloadTarget(destination: .directory(dir)).folder
            let partial = try PartialFile.createEmpty("n.bin.part", in: folder)
            let part = dir.appendingPathComponent("n.bin.part"), moved = dir.appendingPathComponent("moved.bin")
            try FileManager.default.moveItem(at: part, to: moved)
            try Data("someone else's".utf8).write(to: part)
            let content = Self.bytes(65_536, seed: 3)
            #expect(try Self.write(content, misalignment: 0, at: 0, to: partial) == false)
            partial.closeKeeping()
            #expect(try Data(contentsOf: moved) == Data(content))
            #expect(try Data(contentsOf: part) == Data("someone else's".utf8))
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
