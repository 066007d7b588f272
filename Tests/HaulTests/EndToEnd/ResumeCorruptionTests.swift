import Foundation
import HaulServer
import HaulTestSupport
import Testing
@testable import Haul

/// A partial file whose record is missing, damaged or does not fit it is never trusted: the
/// download says once that it starts over, downloads everything again, and ends byte-identical.
///
/// Exclusive: paced downloads are interrupted mid-way.
@Suite("Resume with a damaged record or partial", .exclusive, .serialized, .timeLimit(.minutes(1)))
struct ResumeCorruptionTests {
    static let size: Int64 = 3_000_000

    /// What is done to the files between the two runs.
    enum Damage: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case truncateRecord, flipRecordByte, deleteRecord, emptyRecord, partialLongerThanRecorded, partialShorterThanClaimed

        func apply(in dir: URL) throws {
            let recordURL = dir.appendingPathComponent("file.bin.resume")
            let partialURL = dir.appendingPathComponent("file.bin.part")
            var record = try Data(contentsOf: recordURL)
            switch self {
            case .truncateRecord:
                try record.prefix(record.count / 2).write(to: recordURL)
            case .flipRecordByte:
                let index = record.startIndex + record.count / 2
                record[index] ^= 0x01
                try record.write(to: recordURL)
            case .deleteRecord:
                try FileManager.default.removeItem(at: recordURL)
            case .emptyRecord:
                try Data().write(to: recordURL)
            case .partialLongerThanRecorded:
                let handle = try FileHandle(forWritingTo: partialURL)
                defer { try? handle.close() }
                try handle.truncate(atOffset: UInt64(ResumeCorruptionTests.size + 10))
            case .partialShorterThanClaimed:
                let handle = try FileHandle(forWritingTo: partialURL)
                defer { try? handle.close() }
                try handle.truncate(atOffset: 100)
            }
        }

        var testDescription: String { rawValue }
    }

    @Test(arguments: Damage.allCases)
    func damageMeansStartingOverOnce(damage: Damage) async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { dir in
            let downloader = resumeDownloader(connections: 2)
            let slow = Validators.etag.resource(size: Self.size, rate: 250_000)
            _ = try await interruptFirstRun(server, slow, downloader, in: dir, after: 300_000)
            try damage.apply(in: dir)

            server.setResource("/file.bin", Validators.etag.resource(size: Self.size, rate: nil))
            let before = server.requests.count
            let sentBefore = server.bodyBytesSent
            let second = await runToEnd(downloader, DownloadRequest(url: url(server, "/file.bin")), to: .directory(dir))

            #expect(second.error == nil, "\(second.error?.description ?? "")")
            #expect(second.startingOver.count == 1, "\(second.names)")
            #expect(second.names.first == "startingOver", "said before anything starts: \(second.names)")
            let first = try #require(requests(of: server, after: before).first)
            #expect(first.header("Range") == "bytes=0-")
            #expect(first.header("If-Range") == nil)
            #expect(second.started?.resumedFrom == 0)
            #expect(server.bodyBytesSent - sentBefore >= Self.size)
            #expect(listFiles(dir) == ["file.bin"])
            #expect(try contents(dir.appendingPathComponent("file.bin")) == slow.bytes(0..<Self.size))
        }
    }

    @Test func aPartialFromAnotherURLIsNotTrusted() async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { dir in
            let downloader = resumeDownloader()
            let slow = Validators.etag.resource(size: Self.size, rate: 500_000)
            _ = try await interruptFirstRun(server, slow, downloader, in: dir, after: 300_000)
            // Another path with the same last component (and the same ETag): another resource.
            let other = Validators.etag.resource(size: Self.size, seed: 9, rate: nil)
            server.setResource("/elsewhere/file.bin", other)
            let second = await runToEnd(downloader, DownloadRequest(url: url(server, "/elsewhere/file.bin")), to: .directory(dir))

            #expect(second.error == nil, "\(second.error?.description ?? "")")
            #expect(second.startingOver.count == 1, "\(second.names)")
            #expect(second.started?.resumedFrom == 0)
            #expect(listFiles(dir) == ["file.bin"])
            #expect(try contents(dir.appendingPathComponent("file.bin")) == other.bytes(0..<Self.size))
        }
    }
}
