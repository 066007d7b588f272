import CHaulSys
import Foundation
import HaulTestSupport
import Testing
@testable import Haul
import HaulCore
import HaulHTTP
import HaulCrypto
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The hashing that follows a download's writes (``StreamHasher``): whatever order the slices
/// arrive in and however far the follower got, the digests are those of the whole file.
@Suite("Hashing that follows the written bytes", .throttled)
struct StreamHasherTests {
    /// 9 MiB and a bit: more than two of the follower's wake-up batches, not a multiple of its step.
    static let content = FileHashingTests.content(count: 9 << 20 | 12_345)

    /// Writes `content` into a new file in `folder` in the slices `order` gives (offset ranges),
    /// offering each to a hasher after it is written, then finishes it.
    private func hashWhileWriting(in folder: URL, slices: [Range<Int>], finishWith algorithms: [ChecksumAlgorithm])
        throws -> [ChecksumAlgorithm: [UInt8]] {
        let fd = try Self.openPartial(in: folder)
        defer { close(fd) }
        let hasher = StreamHasher(algorithms: algorithms, descriptor: fd, threads: ThreadPool())
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

    /// Opens `folder`/partial: an empty file for reading and writing, or, given `bytes`, a file
    /// holding them, for reading. The caller closes it.
    private static func openPartial(in folder: URL, holding bytes: [UInt8]? = nil) throws -> Int32 {
        let path = folder.appendingPathComponent("partial").path
        let fd: Int32
        if let bytes {
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            fd = open(path, O_RDONLY)
        } else {
            fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0o600)
        }
        try #require(fd >= 0)
        return fd
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
            let fd = try Self.openPartial(in: folder, holding: Self.content)
            defer { close(fd) }
            let hasher = StreamHasher(algorithms: [.sha256], descriptor: fd, threads: ThreadPool())
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
            let fd = try Self.openPartial(in: folder, holding: Array(Self.content[0..<1000]))
            defer { close(fd) }
            let hasher = StreamHasher(algorithms: [.sha1], descriptor: fd, threads: ThreadPool())
            #expect(throws: DownloadError.self) { try hasher.finish(length: 5000) }
        }
    }

    @Test("the follower hashes while the download runs, in the background class; finish takes over where it is")
    func followerHashesThenFinishTakesOver() async throws {
        try await withTemporaryDirectory { folder in
            let fd = try Self.openPartial(in: folder)
            defer { close(fd) }
            let hasher = StreamHasher(algorithms: [.sha256], descriptor: fd, threads: ThreadPool())
            defer { hasher.stop() }
            let firstPart = 6 << 20   // more than one wake-up batch (4 MiB): it hashes the first 2 MiB or more
            Self.content.withUnsafeBytes { all in
                let bytes = UnsafeRawBufferPointer(rebasing: all[0..<firstPart])
                _ = pwrite(fd, bytes.baseAddress, bytes.count, 0)
                hasher.offer(bytes, at: 0)
            }
            #expect(await eventually { hasher.followedBytes >= 2 << 20 })
            #if os(Linux)
            #expect(hasher.followsInBackground)
            #endif
            Self.content.withUnsafeBytes { all in
                let bytes = UnsafeRawBufferPointer(rebasing: all[firstPart...])
                _ = pwrite(fd, bytes.baseAddress, bytes.count, off_t(firstPart))
                hasher.offer(bytes, at: Int64(firstPart))
            }
            let digests = try hasher.finish(length: Int64(Self.content.count))
            #expect(digests[.sha256] == Digest.hash(.sha256, Self.content))
        }
    }

    @Test("a follower that cannot read what was offered: finish reports the file-system error")
    func followerFailureIsReported() throws {
        try withTemporaryDirectory { folder in
            let fd = try Self.openPartial(in: folder)   // empty: the offered bytes are not there
            defer { close(fd) }
            let hasher = StreamHasher(algorithms: [.sha256], descriptor: fd, threads: ThreadPool())
            Self.content.withUnsafeBytes { all in
                hasher.offer(UnsafeRawBufferPointer(rebasing: all[0..<(5 << 20)]), at: 0)
            }
            // The follower wakes (5 MiB > one batch), reads nothing and records the failure; finish
            // throws either that error or its own for the same missing bytes.
            #expect(throws: DownloadError.self) { try hasher.finish(length: 5 << 20) }
        }
    }

    @Test("stop before any offer, stop twice, finish after stop: each returns at once", .timeLimit(.minutes(1)))
    func stopIsIdempotentAndNeverWaitsForAFollowerThatDoesNotExist() throws {
        try withTemporaryDirectory { folder in
            let fd = try Self.openPartial(in: folder, holding: Array(Self.content[0..<1000]))
            defer { close(fd) }
            let hasher = StreamHasher(algorithms: [.md5], descriptor: fd, threads: ThreadPool())
            hasher.stop()
            hasher.stop()
            // No follower ever runs now; finish hashes the whole file itself.
            Self.content.withUnsafeBytes { all in hasher.offer(UnsafeRawBufferPointer(rebasing: all[0..<1000]), at: 0) }
            let digests = try hasher.finish(length: 1000)
            #expect(digests[.md5] == Digest.hash(.md5, Self.content[0..<1000]))
            #expect(hasher.followedBytes == 0)
        }
    }

    @Test("stop while the follower is hashing: it ends, and nothing waits for the rest", .timeLimit(.minutes(1)))
    func stopWhileFollowing() async throws {
        try await withTemporaryDirectory { folder in
            let fd = try Self.openPartial(in: folder, holding: Self.content)
            defer { close(fd) }
            let hasher = StreamHasher(algorithms: [.sha512, .sha1], descriptor: fd, threads: ThreadPool())
            Self.content.withUnsafeBytes { all in hasher.offer(UnsafeRawBufferPointer(rebasing: all[...]), at: 0) }
            #expect(await eventually { hasher.followedBytes > 0 })
            hasher.stop()
            let afterStop = hasher.followedBytes
            try await Task.sleep(for: .milliseconds(50))
            #expect(hasher.followedBytes == afterStop)   // the follower ended
        }
    }

    /// `folder`/partial opened again with `O_DIRECT` (as a download written past the page cache
    /// has it); `nil` where the file system takes no direct I/O. The caller closes it.
    private static func openDirect(in folder: URL) -> Int32? {
        let directory = open(folder.path, O_RDONLY)
        guard directory >= 0 else { return nil }
        defer { close(directory) }
        let fd = haul_open_direct(directory, "partial")
        return fd >= 0 ? fd : nil
    }

    /// Writes `content` in `slices` (after `pwrite`, each offered), for a hasher that reads past
    /// the cache through a window of `window` bytes, then finishes it; `nil` without direct I/O.
    private func hashPastCache(in folder: URL, slices: [Range<Int>], window: Int = StreamHasher.windowSize,
                               whileWriting check: (StreamHasher) -> Void = { _ in }) throws -> [ChecksumAlgorithm: [UInt8]]? {
        let fd = try Self.openPartial(in: folder)
        defer { close(fd) }
        guard let direct = Self.openDirect(in: folder) else { return nil }
        defer { close(direct) }
        let hasher = StreamHasher(algorithms: [.sha256, .md5], descriptor: fd, threads: ThreadPool())
        defer { hasher.stop() }
        hasher.readPastCache(direct, window: window)
        try Self.content.withUnsafeBytes { all in
            for slice in slices {
                let bytes = UnsafeRawBufferPointer(rebasing: all[slice])
                try #require(pwrite(fd, bytes.baseAddress, bytes.count, off_t(slice.lowerBound)) == bytes.count)
                hasher.offer(bytes, at: Int64(slice.lowerBound))
            }
        }
        check(hasher)
        return try hasher.finish(length: Int64(Self.content.count))
    }

    @Test("past the cache, slices in order: hashed from the window, the digests of the whole file")
    func pastCacheInOrder() throws {
        try withTemporaryDirectory { folder in
            guard let digests = try hashPastCache(in: folder, slices: Self.slices(of: 1 << 20)) else { return }
            #expect(digests[.sha256] == Digest.hash(.sha256, Self.content))
            #expect(digests[.md5] == Digest.hash(.md5, Self.content))
        }
    }

    @Test("past the cache, four ranges filled in turn (an even plan): what missed the window is read back")
    func pastCacheOutOfOrder() throws {
        try withTemporaryDirectory { folder in
            var slices = Self.slices(of: 256 << 10)
            let quarter = slices.count / 4
            slices = Array(slices[quarter...]) + Array(slices[..<quarter])
            // A window of 1 MiB: the first quarter fits it, the rest is read back past the cache.
            guard let digests = try hashPastCache(in: folder, slices: slices, window: 1 << 20) else { return }
            #expect(digests[.sha256] == Digest.hash(.sha256, Self.content))
        }
    }

    @Test("past the cache, a window smaller than the file: writers wait for the follower, which hashes nearly all as it goes",
          .timeLimit(.minutes(1)))
    func pastCacheWritersWaitForTheFollower() throws {
        try withTemporaryDirectory { folder in
            let window = 1 << 20
            let digests = try hashPastCache(in: folder, slices: Self.slices(of: 256 << 10), window: window) { hasher in
                #expect(hasher.followedBytes >= Int64(Self.content.count - window - (256 << 10)))
                #expect(!hasher.followsInBackground)   // writers wait for it: normal priority
            }
            guard let digests else { return }
            #expect(digests[.sha256] == Digest.hash(.sha256, Self.content))
            #expect(digests[.md5] == Digest.hash(.md5, Self.content))
        }
    }

    @Test("past the cache, nothing offered (a resumed download's old bytes): finish reads it all back, ahead of the hashing")
    func pastCacheNothingOffered() throws {
        try withTemporaryDirectory { folder in
            let fd = try Self.openPartial(in: folder, holding: Self.content)
            defer { close(fd) }
            guard let direct = Self.openDirect(in: folder) else { return }
            defer { close(direct) }
            let hasher = StreamHasher(algorithms: [.sha1], descriptor: fd, threads: ThreadPool())
            hasher.readPastCache(direct, window: 2 << 20)
            #expect(try hasher.finish(length: Int64(Self.content.count))[.sha1] == Digest.hash(.sha1, Self.content))
            let short = StreamHasher(algorithms: [.sha1], descriptor: fd, threads: ThreadPool())
            short.readPastCache(direct, window: 2 << 20)
            #expect(throws: DownloadError.self) { try short.finish(length: Int64(Self.content.count) + 5000) }
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

    @Test("runAlone: a thread put in the background class is never handed another body")
    func backgroundThreadIsNotReused() async throws {
        let threads = ThreadPool()
        let alone = await withCheckedContinuation { continuation in
            threads.runAloneInTest {
                continuation.resume(returning: (haul_thread_background(1), Self.threadID()))
            }
        }
        #if os(Linux)
        #expect(alone.0 == 0)
        #endif
        try await Task.sleep(for: .milliseconds(20))   // it would be parked by now, if it were pooled
        let next = await withCheckedContinuation { continuation in
            threads.runInTest { continuation.resume(returning: Self.threadID()) }
        }
        #expect(next != alone.1)
        #if os(Linux)
        #expect(await withCheckedContinuation { continuation in
            threads.runInTest { continuation.resume(returning: sched_getscheduler(0)) }
        } == SCHED_OTHER)
        #endif
    }

    @Test func finishStopsWhenAskedTo() throws {
        try withTemporaryDirectory { dir in
            let fd = try Self.openPartial(in: dir, holding: Self.content)
            defer { close(fd) }
            let hasher = StreamHasher(algorithms: [.sha256], descriptor: fd, threads: ThreadPool())
            let error = #expect(throws: DownloadError.self) {
                try hasher.finish(length: Int64(Self.content.count), stop: { true })
            }
            #expect(error?.code == .cancelled)
        }
    }
}
