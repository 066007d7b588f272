import Foundation
import HaulTestSupport
import Testing
@testable import Haul
import HaulCore
import HaulHTTP

/// Finished files handed to the batch committer get their names, durably: one sync of the file
/// system for a batch, each file's own fsync for a batch of one or when that sync fails.
@Suite("The batch committer", .throttled, .timeLimit(.minutes(1)))
struct BatchCommitterTests {
    /// A committer whose file-system syncs and per-file write checks are counted (and fail
    /// with `failWith`, `checkFailsWith`).
    final class CountingSync: Sendable {
        let calls = SharedStateLock(0)
        let checks = SharedStateLock(0)
        let failWith: Int32
        let checkFailsWith: Int32

        init(failWith: Int32 = 0, checkFailsWith: Int32 = 0) {
            self.failWith = failWith
            self.checkFailsWith = checkFailsWith
        }

        func committer() -> BatchCommitter {
            BatchCommitter(threads: ThreadPool(), syncFileSystem: { [self] descriptor in
                calls.withLock { $0 += 1 }
                if failWith != 0 { return failWith }
                return BatchCommitter.syncFileSystem(of: descriptor)
            }, checkWritten: { [self] descriptor in
                checks.withLock { $0 += 1 }
                if checkFailsWith != 0 { return checkFailsWith }
                return BatchCommitter.checkWritten(descriptor)
            })
        }

        var count: Int { calls.withLock { $0 } }
        var checkCount: Int { checks.withLock { $0 } }
    }

    /// `name.part` in `dir`, holding `bytes`, written and ready for its commit, its name reserved.
    static func finishedFile(_ name: String, _ bytes: [UInt8], in target: DownloadTarget,
                             renameOnConflict: Bool = true) throws -> FileCommit {
        #expect(target.reservations.reserve(name, in: target.folder))
        let partial = try PartialFile.createEmpty(name + PartialFile.suffix, in: target.folder)
        try bytes.withUnsafeBytes { try partial.write($0, at: 0) }
        partial.markFinished(mode: 0o644)
        return FileCommit(partial: partial, name: name, fileURL: target.fileURL(name), ownsName: true, byteCount: Int64(bytes.count),
                          head: ResponseHead(status: 200, headers: HTTPHeaders([])), replaceAllowed: false,
                          renameOnConflict: renameOnConflict, recordMayExist: false, sha256: nil, target: target)
    }

    static func bytes(_ seed: Int, count: Int = 70_000) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ seed) }
    }

    @Test func aBatchIsSyncedTwiceForAllItsFilesThenRenamed() throws {
        try withTemporaryDirectory { dir in
            let target = try DownloadTarget(destination: .directory(dir))
            let commits = try (0..<5).map { try Self.finishedFile("f\($0).bin", Self.bytes($0), in: target) }
            let sync = CountingSync()
            let results = sync.committer().commit(commits)

            #expect(sync.count == 2, "one syncfs, then one more to flush what it wrote last")
            #expect(sync.checkCount == 5, "each file is checked for a write error the sync did not report")
            #expect(listFiles(dir) == (0..<5).map { "f\($0).bin" })
            for (index, result) in results.enumerated() {
                let done = try result.get()
                #expect(done.fileURL.lastPathComponent == "f\(index).bin")
                #expect(done.byteCount == 70_000)
                #expect(try contents(dir.appendingPathComponent("f\(index).bin")) == Self.bytes(index))
            }
            // The reservations were released: the names can be taken again.
            for index in 0..<5 {
                #expect(target.reservations.reserve("f\(index).bin", in: target.folder))
                target.release("f\(index).bin")
            }
        }
    }

    @Test func aBatchOfOneIsSyncedOnItsOwn() throws {
        try withTemporaryDirectory { dir in
            let target = try DownloadTarget(destination: .directory(dir))
            let sync = CountingSync()
            let results = sync.committer().commit([try Self.finishedFile("only.bin", Self.bytes(9), in: target)])

            #expect(sync.count == 0, "a lone file never syncs the whole file system")
            #expect(sync.checkCount == 0)
            #expect(try results[0].get().fileURL.lastPathComponent == "only.bin")
            #expect(listFiles(dir) == ["only.bin"])
        }
    }

    @Test func aFailedFileSystemSyncFallsBackToEachFilesOwnSync() throws {
        try withTemporaryDirectory { dir in
            let target = try DownloadTarget(destination: .directory(dir))
            let commits = try (0..<3).map { try Self.finishedFile("g\($0).bin", Self.bytes($0), in: target) }
            let sync = CountingSync(failWith: EIO)
            let results = sync.committer().commit(commits)

            #expect(sync.count == 1, "no second sync after a failed one")
            #expect(sync.checkCount == 0)
            #expect(results.allSatisfy { (try? $0.get()) != nil })
            #expect(listFiles(dir) == ["g0.bin", "g1.bin", "g2.bin"])
        }
    }

    @Test func aFileWithAnUnreportedWriteErrorFailsAndIsRemoved() throws {
        try withTemporaryDirectory { dir in
            let target = try DownloadTarget(destination: .directory(dir))
            let commits = try (0..<3).map { try Self.finishedFile("h\($0).bin", Self.bytes($0), in: target) }
            let bad = commits[1].partial.descriptor
            let checked = SharedStateLock(0)
            let committer = BatchCommitter(threads: ThreadPool(), syncFileSystem: { BatchCommitter.syncFileSystem(of: $0) },
                                           checkWritten: { descriptor in
                checked.withLock { $0 += 1 }
                return descriptor == bad ? EIO : 0
            })
            let results = committer.commit(commits)

            // The check reported the error to that descriptor: an fsync would now return 0, so the
            // file fails instead of getting its name; the others are committed.
            #expect(checked.withLock { $0 } == 3)
            #expect(try results[0].get().fileURL.lastPathComponent == "h0.bin")
            #expect(try results[2].get().fileURL.lastPathComponent == "h2.bin")
            if case .failure(let error) = results[1] { #expect(error.code == .fileSystem) } else { Issue.record("h1 was committed") }
            #expect(listFiles(dir) == ["h0.bin", "h2.bin"])
        }
    }

    @Test func onlyNewNamesOnFileSystemsWhoseSyncfsIsDurableGoToTheCommitter() throws {
        #expect(BatchCommitter.syncsDurably(fileSystemType: 0xEF53))        // ext2/3/4
        #expect(BatchCommitter.syncsDurably(fileSystemType: 0x5846_5342))   // XFS
        #expect(BatchCommitter.syncsDurably(fileSystemType: 0x9123_683E))   // Btrfs
        #expect(BatchCommitter.syncsDurably(fileSystemType: 0x0102_1994))   // tmpfs
        #expect(!BatchCommitter.syncsDurably(fileSystemType: 0x6573_5546))  // FUSE
        #expect(!BatchCommitter.syncsDurably(fileSystemType: 0x794C_7630))  // overlayfs
        #expect(!BatchCommitter.syncsDurably(fileSystemType: 0x6969))       // NFS
        #expect(!BatchCommitter.syncsDurably(fileSystemType: 0))            // unknown
        try withTemporaryDirectory { dir in
            let target = try DownloadTarget(destination: .directory(dir))
            let durable = BatchCommitter.syncsDurably(fileSystemType: target.folder.fileSystemType)
            let plain = try Self.finishedFile("p.bin", Self.bytes(1), in: target)
            #expect(BatchCommitter.takes(plain) == durable)
            let replacing = FileCommit(partial: plain.partial, name: "p.bin", fileURL: plain.fileURL, ownsName: true, byteCount: plain.byteCount,
                                       head: plain.head, replaceAllowed: true, renameOnConflict: false,
                                       recordMayExist: false, sha256: nil, target: target)
            #expect(!BatchCommitter.takes(replacing), "a commit that may replace a file runs on the download's thread")
            let foundComplete = FileCommit(partial: plain.partial, name: "p.bin", fileURL: plain.fileURL, ownsName: false, byteCount: plain.byteCount,
                                           head: plain.head, replaceAllowed: false, renameOnConflict: true,
                                           recordMayExist: true, sha256: nil, target: target)
            #expect(!BatchCommitter.takes(foundComplete))
            let large = FileCommit(partial: plain.partial, name: "p.bin", fileURL: plain.fileURL, ownsName: true, byteCount: BatchCommitter.largestFile + 1,
                                   head: plain.head, replaceAllowed: false, renameOnConflict: true,
                                   recordMayExist: false, sha256: nil, target: target)
            #expect(!BatchCommitter.takes(large))
            _ = try plain.run()
        }
    }

    @Test func aNameTakenMeanwhileMovesOnOrKeepsThePartial() throws {
        try withTemporaryDirectory { dir in
            let target = try DownloadTarget(destination: .directory(dir))
            let moving = try Self.finishedFile("a.bin", Self.bytes(1), in: target)
            let staying = try Self.finishedFile("b.bin", Self.bytes(2), in: target, renameOnConflict: false)
            try Data("theirs".utf8).write(to: dir.appendingPathComponent("a.bin"))
            try Data("theirs".utf8).write(to: dir.appendingPathComponent("b.bin"))
            let results = CountingSync().committer().commit([moving, staying])

            #expect(try results[0].get().fileURL.lastPathComponent == "a.1.bin")
            #expect(throws: DownloadError.self) { try results[1].get() }
            if case .failure(let error) = results[1] { #expect(error.code == .destinationExists) }
            #expect(listFiles(dir) == ["a.1.bin", "a.bin", "b.bin", "b.bin.part"])
            #expect(try contents(dir.appendingPathComponent("a.1.bin")) == Self.bytes(1))
            #expect(try contents(dir.appendingPathComponent("b.bin.part")) == Self.bytes(2))
            #expect(try contents(dir.appendingPathComponent("a.bin")) == Array("theirs".utf8))
        }
    }

    @Test func submittedCommitsAllEndOnceOnTheCommittersThread() async throws {
        try await withTemporaryDirectory { dir in
            let target = try DownloadTarget(destination: .directory(dir))
            let committer = CountingSync().committer()
            let names = SharedStateLock<[String]>([])
            await withCheckedContinuation { (all: CheckedContinuation<Void, Never>) in
                let left = SharedStateLock(40)
                for index in 0..<40 {
                    let commit: FileCommit
                    do { commit = try Self.finishedFile("s\(index).bin", Self.bytes(index), in: target) } catch {
                        Issue.record("\(error)")
                        return
                    }
                    committer.submit(commit) { result in
                        names.withLock { $0.append((try? result.get().fileURL.lastPathComponent) ?? "failed") }
                        if left.withLock({ $0 -= 1; return $0 }) == 0 { all.resume() }
                    }
                }
            }
            let expected = (0..<40).map { "s\($0).bin" }.sorted()
            #expect(names.withLock { $0.sorted() } == expected)
            #expect(listFiles(dir) == expected)
        }
    }

    @Test func withoutAThreadTheSubmittingThreadCommits() throws {
        try withTemporaryDirectory { dir in
            // Given a committer whose pool gets no thread
            let target = try DownloadTarget(destination: .directory(dir))
            let committer = BatchCommitter(threads: ThreadPool(starter: { _, _ in EAGAIN }))
            let submitter = String(describing: pthread_self())
            let committedOn = SharedStateLock<String?>(nil)

            // When a file is submitted
            committer.submit(try Self.finishedFile("alone.bin", Self.bytes(7), in: target)) { result in
                if case .success = result { committedOn.withLock { $0 = String(describing: pthread_self()) } }
            }

            // Then it was committed before submit returned, on the submitting thread
            #expect(committedOn.withLock { $0 } == submitter)
            #expect(listFiles(dir) == ["alone.bin"])
        }
    }

    @Test func aHandOffWaitsWhileTooManyFilesWait() async throws {
        try await withTemporaryDirectory { (dir) async throws in
            let target = try DownloadTarget(destination: .directory(dir))
            let committer = BatchCommitter(threads: ThreadPool(), maximumWaiting: 2)
            let gate = DispatchSemaphore(value: 0)
            let inDone = DispatchSemaphore(value: 0)
            let ended = DispatchGroup()
            // The first file's callback holds the committer's thread: what comes next waits.
            ended.enter()
            committer.submit(try Self.finishedFile("w0.bin", Self.bytes(0), in: target)) { _ in
                inDone.signal()
                gate.wait()
                ended.leave()
            }
            inDone.wait()
            for index in 1...2 {
                ended.enter()
                committer.submit(try Self.finishedFile("w\(index).bin", Self.bytes(index), in: target)) { _ in ended.leave() }
            }
            let third = try Self.finishedFile("w3.bin", Self.bytes(3), in: target)
            let handedOff = SharedStateLock(false)
            ended.enter()
            DispatchQueue.global().async {
                committer.submit(third) { _ in ended.leave() }
                handedOff.withLock { $0 = true }
            }
            try await Task.sleep(for: .milliseconds(300))
            #expect(!handedOff.withLock { $0 }, "two files were waiting: the third hand-off waits for room")
            gate.signal()
            await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                ended.notify(queue: .global()) { done.resume() }
            }
            #expect(handedOff.withLock { $0 })
            #expect(listFiles(dir) == ["w0.bin", "w1.bin", "w2.bin", "w3.bin"])
        }
    }
}
