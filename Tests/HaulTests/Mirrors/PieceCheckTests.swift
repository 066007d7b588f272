import Foundation
@testable import Haul
import HaulCrypto
import HaulServer
import HaulTestSupport
import Testing

/// Piece checksums (a Metalink document's `<pieces>`): every piece is hashed once complete; a
/// server whose bytes fail is set aside and its pieces come again from another.
/// Serialized: each test runs two servers and a segmented download.
@Suite("Piece checks", .throttled, .serialized)
struct PieceCheckTests {
    static let size = MirrorTests.size
    static let path = MirrorTests.path

    /// SHA-256 of each 256 KiB piece of the served content.
    static func pieces(length: Int = 256 << 10) throws -> PieceChecksums {
        let content = expectedContent(size, seed: 7)
        let digests = stride(from: 0, to: size, by: length).map { Digest.hash(.sha256, content[$0..<min(size, $0 + length)]) }
        return try PieceChecksums(length: Int64(length), algorithm: .sha256, digests: digests)
    }

    @Test func aMirrorSendingOtherBytesFailsItsPiecesAndIsSetAside() async throws {
        let (good, other) = (try HaulServer(), try HaulServer())
        var request = MirrorTests.request(url(good, Self.path), mirrors: [url(other, "/bytes/\(Self.size)/f.bin?seed=8")])
        request.pieces = try Self.pieces()
        let outcome = try await MirrorTests.fetch(request)
        let warnings = MirrorTests.warnings(outcome)
        #expect(warnings.contains { $0.contains("do not match piece") }, "\(warnings)")
        #expect(warnings.contains { $0.contains("source 2") && $0.contains("set aside") && $0.contains("checksum") }, "\(warnings)")
    }

    @Test func withOneServerABadPieceFailsTheDownloadAndKeepsNoFile() async throws {
        let other = try HaulServer()
        try await withTemporaryDirectory { dir async throws in
            var request = DownloadRequest(url: url(other, "/bytes/\(Self.size)/f.bin?seed=8"))
            request.pieces = try Self.pieces()
            let error = await expectFailure(MirrorTests.downloader(), request, to: .directory(dir))
            #expect(error?.code == .checksumMismatch, "\(error?.description ?? "")")
            #expect(!listFiles(dir).contains("f.bin"))
        }
    }

    /// A small file arrives whole on one connection, never split into ranges: its pieces are
    /// checked once it is written, before it gets its name.
    @Test func aSmallFileOnOneConnectionHasItsPiecesCheckedToo() async throws {
        let server = try HaulServer()
        let size = 100_000, length = 16_384
        let content = expectedContent(size, seed: 7)
        let digests = stride(from: 0, to: size, by: length).map { Digest.hash(.sha256, content[$0..<min(size, $0 + length)]) }
        try await withTemporaryDirectory { dir async throws in
            var bad = DownloadRequest(url: url(server, "/bytes/\(size)/bad.bin?seed=8"))
            bad.pieces = try PieceChecksums(length: Int64(length), algorithm: .sha256, digests: digests)
            let error = await expectFailure(MirrorTests.downloader(), bad, to: .directory(dir))
            #expect(error?.code == .checksumMismatch && error?.message.contains("piece 1") == true, "\(error?.description ?? "")")
            var good = DownloadRequest(url: url(server, "/bytes/\(size)/good.bin?seed=7"))
            good.pieces = bad.pieces
            _ = try await MirrorTests.downloader().download(good, to: .directory(dir)).result()
            #expect(listFiles(dir) == ["good.bin"])
        }
    }

    @Test func piecesThatDoNotCutTheServersLengthFail() async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { dir async throws in
            var request = DownloadRequest(url: url(server, "/bytes/\(Self.size + 1)/f.bin?seed=7"))
            request.pieces = try Self.pieces()
            let error = await expectFailure(MirrorTests.downloader(), request, to: .directory(dir))
            #expect(error?.code == .lengthMismatch)
        }
    }

    @Test func goodPiecesPassWithOneServerAndSeveral() async throws {
        let (first, second) = (try HaulServer(), try HaulServer())
        var alone = DownloadRequest(url: url(first, Self.path))
        alone.pieces = try Self.pieces(length: 100_000)
        #expect(MirrorTests.warnings(try await MirrorTests.fetch(alone)).isEmpty)
        var both = MirrorTests.request(url(first, Self.path), mirrors: [url(second, Self.path)])
        both.pieces = try Self.pieces()
        #expect(MirrorTests.warnings(try await MirrorTests.fetch(both)).isEmpty)
    }
}

/// The pieces as a pure state: when each is ready for its check, and what a failed check gives back.
@Suite struct PieceTrackerTests {
    /// Four pieces of 100 bytes (the last 50) for a file of 350.
    static func checksums() throws -> PieceChecksums {
        try PieceChecksums(length: 100, algorithm: .md5, digests: Array(repeating: [UInt8](repeating: 0, count: 16), count: 4))
    }

    static func tracker(verified: [Range<Int64>] = []) throws -> PieceTracker {
        PieceTracker(checksums: try checksums(), total: 350, verified: verified)
    }

    @Test func aPieceIsReadyOnceWholeAndHandedOutOnce() throws {
        var tracker = try Self.tracker()
        #expect(tracker.wrote(0..<50, by: 0, completed: [0..<50]).isEmpty)
        #expect(tracker.wrote(50..<150, by: 1, completed: [0..<150]) == [0])
        #expect(tracker.isChecking)
        #expect(tracker.wrote(150..<200, by: 1, completed: [0..<200]) == [1], "piece 0 is not handed out twice")
        #expect(tracker.wrote(300..<350, by: 0, completed: [0..<200, 300..<350]) == [3], "the short last piece")
        let failed = tracker.checked(0, matched: false)
        #expect(failed.refetch == 0..<100)
        #expect(failed.blamed == [], "two servers wrote it: fetched again first")
        #expect(tracker.checked(1, matched: true) == (nil, []))
        #expect(tracker.checked(3, matched: true) == (nil, []))
        #expect(!tracker.isChecking)
        #expect(tracker.wrote(0..<100, by: 2, completed: [0..<200, 300..<350]) == [0], "a failed piece is checked again")
        #expect(tracker.checked(0, matched: false).blamed == [2], "one server wrote it all")
        #expect(tracker.wrote(0..<50, by: 0, completed: [0..<50]).isEmpty)
        #expect(tracker.wrote(50..<100, by: 1, completed: [0..<200]) == [0])
        #expect(tracker.checked(0, matched: false).blamed == [0, 1], "failed three times: both are blamed")
    }

    @Test func aPieceThatPassesWithoutASuspectBlamesIt() throws {
        var tracker = try Self.tracker()
        #expect(tracker.wrote(0..<60, by: 0, completed: [0..<60]).isEmpty)
        #expect(tracker.wrote(60..<100, by: 1, completed: [0..<100]) == [0])
        #expect(tracker.checked(0, matched: false).blamed == [], "two servers wrote it")
        #expect(tracker.wrote(0..<30, by: 1, completed: [0..<30]).isEmpty)
        #expect(tracker.wrote(30..<100, by: 0, completed: [0..<100]) == [0])
        #expect(tracker.checked(0, matched: false).blamed == [], "the same two wrote it again")
        #expect(tracker.wrote(0..<100, by: 0, completed: [0..<100]) == [0])
        #expect(tracker.checked(0, matched: true) == (nil, [1]), "right without server 1, which wrote it each time it failed")
        #expect(tracker.wrote(100..<200, by: 0, completed: [0..<200]) == [1])
        #expect(tracker.checked(1, matched: true) == (nil, []), "a piece that never failed blames no one")
    }

    @Test func aResumeKeepsOnlyTheWholePiecesItsRecordListsAsVerified() throws {
        let checksums = try Self.checksums()
        // Pieces 0 and 1 complete on disk, only 0 verified: 1 is fetched again; 3 is half there, kept.
        #expect(PieceTracker.trusted([0..<200, 300..<325], verified: [0..<100], checksums: checksums, total: 350)
                == [0..<100, 300..<325])
        #expect(PieceTracker.trusted([0..<350], verified: [0..<350], checksums: checksums, total: 350) == [0..<350])
        #expect(PieceTracker.trusted([50..<150], verified: [], checksums: checksums, total: 350) == [50..<150],
                "no piece whole: every byte is kept, each piece will be checked once complete")
        var tracker = PieceTracker(checksums: checksums, total: 350, verified: [0..<100, 300..<350])
        #expect(tracker.verifiedRanges == [0..<100, 300..<350])
        #expect(tracker.wrote(100..<200, by: 0, completed: [0..<200, 300..<350]) == [1])
        #expect(tracker.checked(1, matched: true) == (nil, []))
        #expect(tracker.verifiedRanges == [0..<200, 300..<350], "verified pieces merge")
    }

    /// Piece 1 (100..<200) complete but not verified at the kill: its bytes, and the block hash
    /// run that crosses into piece 0, go; piece 0 stays verified only where bytes are kept.
    @Test func piecesThatOverlapAreAllLeftOutOfTheRecord() {
        let pieces = [BlockHash(range: 0..<10, crc32c: 1), BlockHash(range: 10..<30, crc32c: 2), BlockHash(range: 20..<25, crc32c: 3),
                      BlockHash(range: 24..<40, crc32c: 4), BlockHash(range: 40..<50, crc32c: 5), BlockHash(range: 45..<46, crc32c: 6),
                      BlockHash(range: 60..<70, crc32c: 7)]
        let kept = SegmentedTransfer.StateMachine.separate(pieces)
        #expect(kept.map(\.range) == [0..<10, 60..<70])
        var record = ResumeRecord(redactedURL: "http://127.0.0.1:1/f", redactedFinalURL: "http://127.0.0.1:1/f", resourceKey: String(repeating: "a", count: 64),
                                  etag: nil, lastModified: nil, totalLength: 100, completed: ByteRangeSet([0..<70]),
                                  expectedChecksum: nil, serverDigest: nil, blockHashes: kept, verifiedPieces: ByteRangeSet())
        #expect(record.progressProblem() == nil)
        record.blockHashes = pieces
        #expect(record.progressProblem() == "a block hash is malformed", "what the record refused before")
    }

    @Test func aResumeDropsTheUncheckedPieceWithEveryBlockHashThatTouchesIt() throws {
        let hashes = [BlockHash(range: 0..<50, crc32c: 1), BlockHash(range: 50..<150, crc32c: 2),
                      BlockHash(range: 150..<200, crc32c: 3), BlockHash(range: 300..<350, crc32c: 4)]
        let start = SegmentedTransfer.startingPoint(completed: [0..<200, 300..<350], blockHashes: hashes,
                                                    verified: [0..<100, 300..<350], checksums: try Self.checksums(), total: 350)
        #expect(start.completed == [0..<50, 300..<350])
        #expect(start.blockHashes.map(\.range) == [0..<50, 300..<350])
        #expect(start.verified == [0..<50, 300..<350], "within what is kept")
        let all = SegmentedTransfer.startingPoint(completed: [0..<200], blockHashes: Array(hashes.prefix(3)), verified: [0..<200],
                                                  checksums: try Self.checksums(), total: 350)
        #expect(all.completed == [0..<200] && all.blockHashes.count == 3 && all.verified == [0..<200], "nothing unchecked: as it was")
    }

    @Test func piecesVerifiedAtTheStartAreNotCheckedAgain() throws {
        var tracker = try Self.tracker(verified: [0..<200])
        #expect(tracker.wrote(150..<200, by: 0, completed: [0..<200]).isEmpty)
        #expect(tracker.wrote(200..<300, by: 0, completed: [0..<300]) == [2])
    }

    @Test func thePiecesMustCutTheLength() throws {
        let checksums = try PieceChecksums(length: 100, algorithm: .md5, digests: Array(repeating: [UInt8](repeating: 0, count: 16), count: 4))
        #expect(throws: Never.self) { try checksums.check(total: 301) }
        #expect(throws: DownloadError.self) { try checksums.check(total: 300) }
        #expect(throws: DownloadError.self) { try checksums.check(total: 401) }
        #expect(throws: DownloadError.self) { try PieceChecksums(length: 0, algorithm: .md5, digests: []) }
        #expect(throws: DownloadError.self) { try PieceChecksums(length: 10, algorithm: .md5, digests: [[1]]) }
    }

    @Test func reopeningAPieceMovesItsBytesBackToTheGaps() {
        var planner = SegmentPlanner(total: 1000, completed: [0..<600], maximumConnections: 2, minimumSegment: 100)
        planner.reopen(200..<300)
        #expect(planner.completed == [0..<200, 300..<600])
        #expect(planner.unassigned.contains(200..<300))
    }
}

/// The state machine with piece checks: bytes that failed one are missing again, and no block
/// hash that holds any of them is kept (a record would otherwise hold overlapping hashes).
@Suite struct PieceCheckStateMachineTests {
    @Test func aGrownBlockHashOverAFailedPieceIsNotKept() throws {
        let megabyte: Int64 = 1 << 20
        let planner = SegmentPlanner(total: 2 * megabyte, completed: [], maximumConnections: 1, minimumSegment: megabyte)
        let checksums = try PieceChecksums(length: 256 << 10, algorithm: .md5,
                                           digests: Array(repeating: [UInt8](repeating: 0, count: 16), count: 8))
        var machine = SegmentedTransfer.StateMachine(planner: planner, pieces: [], retry: RetryPolicy(), recordInterval: .seconds(1),
                                                     pieceChecksums: checksums)
        _ = machine.start(now: .now)
        // The only worker writes 300 KiB, one block hash growing from 0: piece 1 (0-256 KiB) is ready.
        _ = machine.wrote(worker: 0, upTo: 300 << 10, finished: [], grown: BlockHash(range: 0..<(300 << 10), crc32c: 1))
        #expect(machine.takeChecks(for: 0) == [0])
        machine.pieceChecked(0, matched: false)
        #expect(machine.failure?.code == .checksumMismatch, "one server: a bad piece fails the transfer")
        #expect(!SegmentPlanner.covers(machine.planner.completed, 0..<1), "its bytes are missing again")
        // The worker's next report still carries the hash grown from 0: it holds failed bytes.
        _ = machine.wrote(worker: 0, upTo: 400 << 10, finished: [], grown: BlockHash(range: 0..<(400 << 10), crc32c: 2))
        #expect(machine.allPieces.allSatisfy { $0.range.lowerBound >= 256 << 10 }, "\(machine.allPieces)")
    }
}
