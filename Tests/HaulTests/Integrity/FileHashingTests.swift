import Foundation
import Testing
import HaulTestSupport
@testable import Haul
import HaulCore
import HaulCrypto

@Suite(.throttled) struct FileHashingTests {
    static func content(count: Int) -> [UInt8] {
        var generator = SplitMix64(seed: 7)
        return (0..<count).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
    }

    @Test(arguments: ChecksumAlgorithm.allCases)
    func hashesAWholeFileLikeOneShot(algorithm: ChecksumAlgorithm) async throws {
        try await withTemporaryDirectory { dir in
            let path = dir.appendingPathComponent("file.bin").path
            // Seconds of hashing in a debug build: on a thread of its own, not the cooperative pool's.
            let (streamed, oneShot) = try await onOwnThread {
                // Larger than one default buffer, and not a multiple of it.
                let bytes = Self.content(count: FileHashing.defaultBufferSize + 12_345)
                try Data(bytes).write(to: URL(fileURLWithPath: path))
                return (try FileHashing.hash(path: path, algorithm: algorithm), Digest.hash(algorithm, bytes))
            }
            #expect(streamed == oneShot)
        }
    }

    @Test(arguments: [1, 7, 4096, 1 << 16])
    func bufferSizeDoesNotChangeTheDigest(bufferSize: Int) throws {
        try withTemporaryDirectory { dir in
            let bytes = Self.content(count: 100_003)
            let path = dir.appendingPathComponent("file.bin").path
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            #expect(try FileHashing.hash(path: path, algorithm: .sha256, bufferSize: bufferSize) == Digest.hash(.sha256, bytes))
        }
    }

    @Test func emptyFile() throws {
        try withTemporaryDirectory { dir in
            let path = dir.appendingPathComponent("empty").path
            try Data().write(to: URL(fileURLWithPath: path))
            #expect(Hex.encode(try FileHashing.hash(path: path, algorithm: .md5)) == "d41d8cd98f00b204e9800998ecf8427e")
        }
    }

    @Test func hashesARangeOfAnOpenFileWithoutMovingItsOffset() throws {
        try withTemporaryDirectory { dir in
            let bytes = Self.content(count: 50_000)
            let path = dir.appendingPathComponent("file.bin").path
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
            defer { try? handle.close() }
            let fd = handle.fileDescriptor
            let block = try FileHashing.hash(descriptor: fd, algorithm: .sha256, range: 10_000..<30_000, bufferSize: 4096)
            #expect(block == Digest.hash(.sha256, bytes[10_000..<30_000]))
            #expect(try handle.offset() == 0)
            #expect(try FileHashing.hash(descriptor: fd, algorithm: .sha256, range: 5..<5) == Digest.hash(.sha256, []))
        }
    }

    @Test func aRangePastTheEndIsAFileSystemError() throws {
        try withTemporaryDirectory { dir in
            let path = dir.appendingPathComponent("short.bin").path
            try Data(Self.content(count: 1000)).write(to: URL(fileURLWithPath: path))
            let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
            defer { try? handle.close() }
            let error = #expect(throws: DownloadError.self) {
                try FileHashing.hash(descriptor: handle.fileDescriptor, algorithm: .sha1, range: 500..<1500)
            }
            #expect(error?.code == .fileSystem)
        }
    }

    @Test func aMissingFileIsAFileSystemError() {
        withTemporaryDirectory { dir in
            let error = #expect(throws: DownloadError.self) {
                try FileHashing.hash(path: dir.appendingPathComponent("missing").path, algorithm: .sha256)
            }
            #expect(error?.code == .fileSystem)
        }
    }

    @Test func stopEndsTheHashingBetweenReads() throws {
        try withTemporaryDirectory { dir in
            let path = dir.appendingPathComponent("big.bin").path
            try Data(Self.content(count: 10 * 4096)).write(to: URL(fileURLWithPath: path))
            let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
            defer { try? handle.close() }
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 4096, alignment: 4096)
            defer { buffer.deallocate() }
            var asked = 0
            let error = #expect(throws: DownloadError.self) {
                try FileHashing.update([Digest(.sha256)], descriptor: handle.fileDescriptor, range: nil, buffer: buffer) {
                    asked += 1
                    return asked == 3
                }
            }
            #expect(error?.code == .cancelled)
            #expect(asked == 3, "asked before each read, and not after the stop")
            // Never stopping, it reads every block (and asks once more before seeing the end).
            asked = 0
            let digest = Digest(.sha256)
            try FileHashing.update([digest], descriptor: handle.fileDescriptor, range: nil, buffer: buffer) {
                asked += 1
                return false
            }
            #expect(asked == 11)
            #expect(digest.finalize() == Digest.hash(.sha256, Self.content(count: 10 * 4096)))
        }
    }
}
