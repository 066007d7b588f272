import CHaulSys
import Foundation
import HaulTestSupport
import Testing
@testable import Haul
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The hashing that follows a download's writes (``StreamHasher``): whatever order the slices
/// arrive in and however far the follower got, the digests are those of the whole file.
@Suite("Hashing that follows the written bytes")
struct StreamHasherTests {
    /// 9 MiB and a bit: more than two of the follower's wake-up batches, not a multiple of its step.
    static let content = FileHashingTests.content(count: 9 << 20 | 12_345)

    /// Writes `content` into a new file in `folder` in the slices `order` gives (offset ranges),
    /// offering each to a hasher after it is written, then finishes it.
    private func hashWhileWriting(in folder: URL, slices: [Range<Int>], finishWith algorithms: [ChecksumAlgorithm])
        throws -> [ChecksumAlgorithm: [UInt8]] {
        let path = folder.appendingPathComponent("partial").path
        let fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0o600)
        try #require(fd >= 0)
        defer { close(fd) }
        let hasher = StreamHasher(algorithms: algorithms, descriptor: fd)
        defer { hasher.stop() }
        try Self.content.withUnsafeBytes { all in
            for slice in slices {
                let bytes = UnsafeRawBufferPointer(rebasing: all[slice])
                try #require(pwrite(fd, bytes.baseAddress, bytes.count, off_t(slice.lowerBound)) == bytes.count)
                hasher.offer(bytes, at: Int64(slice.lowerBound))
            }
        }
        return try hasher.finish(length: Int64(Self.content.count))
    }

    /// Cuts 0..<count into slices of `size` (the last shorter).
    private static func slices(of size: Int, count: Int = content.count) -> [Range<Int>] {
        stride(from: 0, to: count, by: size).map { $0..<min($0 + size, count) }
    }

    @Test("slices written in order (one connection): every algorithm's digest of the whole file",
          arguments: [64 << 10, 1 << 20, 3 << 20])
    func inOrder(sliceSize: Int) throws {
        try withTemporaryDirectory { folder in
            let digests = try hashWhileWriting(in: folder, slices: Self.slices(of: sliceSize),
                                               finishWith: [.sha256, .md5])
            #expect(digests[.sha256] == Digest.hash(.sha256, Self.content))
            #expect(digests[.md5] == Digest.hash(.md5, Self.content))
        }
    }

    @Test("slices written out of order (several connections): the same digest")
    func outOfOrder() throws {
        try withTemporaryDirectory { folder in
            // Four ranges filled in turn, as four connections would, the first one last.
            var slices = Self.slices(of: 256 << 10)
            let quarter = slices.count / 4
            slices = Array(slices[quarter...]) + Array(slices[..<quarter])
            let digests = try hashWhileWriting(in: folder, slices: slices, finishWith: [.sha512])
            #expect(digests[.sha512] == Digest.hash(.sha512, Self.content))
        }
    }

    @Test("only a prefix offered (a resumed download): finish hashes the rest from the file")
    func prefixOffered() throws {
        try withTemporaryDirectory { folder in
            let path = folder.appendingPathComponent("partial").path
            try Data(Self.content).write(to: URL(fileURLWithPath: path))
            let fd = open(path, O_RDONLY)
            try #require(fd >= 0)
            defer { close(fd) }
            let hasher = StreamHasher(algorithms: [.sha256], descriptor: fd)
            Self.content.withUnsafeBytes { all in
                hasher.offer(UnsafeRawBufferPointer(rebasing: all[0..<(5 << 20)]), at: 0)
            }
            let digests = try hasher.finish(length: Int64(Self.content.count))
            #expect(digests[.sha256] == Digest.hash(.sha256, Self.content))
        }
    }

    @Test("a file shorter than the length finish is given: a file-system error, not a digest")
    func fileEndsEarly() throws {
        try withTemporaryDirectory { folder in
            let path = folder.appendingPathComponent("partial").path
            try Data(Self.content[0..<1000]).write(to: URL(fileURLWithPath: path))
            let fd = open(path, O_RDONLY)
            try #require(fd >= 0)
            defer { close(fd) }
            let hasher = StreamHasher(algorithms: [.sha1], descriptor: fd)
            #expect(throws: DownloadError.self) { try hasher.finish(length: 5000) }
        }
    }

    /// This thread's kernel id (a `pthread_t` can repeat as soon as its thread ended).
    private static func threadID() -> Int {
        #if os(Linux)
        // "/proc/thread-self" links to "PID/task/TID".
        let target = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/thread-self")) ?? ""
        return Int(target.split(separator: "/").last ?? "") ?? -1
        #else
        var id: UInt64 = 0
        pthread_threadid_np(nil, &id)
        return Int(id)
        #endif
    }

    @Test("the following thread runs in the idle scheduling class, on a thread that is not reused")
    func followerYieldsTheCPU() async throws {
        let threads = ThreadPool()
        let (policy, alone) = await withCheckedContinuation { continuation in
            threads.runAlone {
                haul_thread_background(1)
                continuation.resume(returning: (sched_getscheduler(0), Self.threadID()))
            }
        }
        #if os(Linux)
        #expect(policy == 5)   // SCHED_IDLE (a _GNU_SOURCE constant the Glibc module leaves out)
        #else
        _ = policy
        #endif
        try await Task.sleep(for: .milliseconds(20))   // it would be parked by now, if it were pooled
        let next = await withCheckedContinuation { continuation in
            threads.run { continuation.resume(returning: (sched_getscheduler(0), Self.threadID())) }
        }
        #expect(next.1 != alone)
        #expect(next.0 == SCHED_OTHER)
    }
}
