import Foundation
@testable import Haul
import HaulServer
import HaulTestSupport
import Testing

/// A full disk is reported before the transfer: the download fails with `diskFull` (exit 3)
/// having taken almost nothing from the server, and a resumable partial keeps its bytes and its
/// record, so the same download resumes once there is room.
///
/// Exclusive: it mounts small scratch file systems, and paced downloads are interrupted mid-way.
@Suite("A full disk before the transfer", .exclusive, .serialized, .timeLimit(.minutes(1)))
struct ResumeDiskFullTests {
    static let size: Int64 = 3_000_000

    @Test(.enabled(if: ScratchMount.isAvailable, "\(ScratchMount.unavailableReason)"))
    func aFreshDownloadTooLargeForTheDiskFailsBeforeItsBody() async throws {
        let server = try HaulServer()
        // Paced, so the body does not come whole with the head: the check must stop it, where a
        // write would have filled the disk's ~1 MiB first.
        server.setResource("/file.bin", Validators.etag.resource(size: Self.size, seed: 3, rate: 500_000))
        try await ScratchMount.with(size: "1m") { dir in
            let outcome = await runToEnd(resumeDownloader(connections: 1), DownloadRequest(url: url(server, "/file.bin")),
                                         to: .directory(dir))
            #expect(outcome.error?.code == .diskFull, "\(outcome.error?.description ?? "finished")")
            #expect(outcome.error?.code.exitStatus == 3)
            #expect(outcome.started == nil, "no transfer may start")
            #expect(await waitForIdle(server))
            #expect(server.requests.count == 1, "no retry of a full disk")
            #expect(server.bodyBytesSent < 300_000, "the server sent \(server.bodyBytesSent) bytes")
            #expect(fileSize(dir.appendingPathComponent("file.bin.part")) == 0)
            #expect(!listFiles(dir).contains("file.bin"))
        }
    }

    @Test(.enabled(if: ScratchMount.isAvailable, "\(ScratchMount.unavailableReason)"))
    func aResumeWithoutRoomKeepsThePartialAndTheRecordAndResumesLater() async throws {
        let server = try HaulServer()
        let resource = Validators.etag.resource(size: Self.size, seed: 4, rate: 1_000_000)
        try await ScratchMount.with(size: "4m") { dir in
            let downloader = resumeDownloader(connections: 1)
            let record = try await interruptFirstRun(server, resource, downloader, in: dir, after: 800_000)
            let partialBefore = try contents(dir.appendingPathComponent("file.bin.part"))
            let recordBefore = try contents(dir.appendingPathComponent("file.bin.resume"))
            // Leave less room than the rest of the file needs (at least 1.2 MB of 3 MB is missing).
            let missing = Self.size - record.completed.byteCount
            var free = try freeBytes(dir)
            let filler = dir.appendingPathComponent("filler")
            try Data(repeating: 1, count: Int(free - missing / 2)).write(to: filler)
            free = try freeBytes(dir)
            try #require(free < missing, "\(free) bytes free, \(missing) missing")

            server.setResource("/file.bin", Validators.etag.resource(size: Self.size, seed: 4, rate: 500_000))
            let requestsBefore = server.requests.count, bytesBefore = server.bodyBytesSent
            let full = await runToEnd(downloader, DownloadRequest(url: url(server, "/file.bin")), to: .directory(dir))

            #expect(full.error?.code == .diskFull, "\(full.error?.description ?? "finished")")
            #expect(full.error?.code.exitStatus == 3)
            #expect(await waitForIdle(server))
            #expect(requests(of: server, after: requestsBefore).count == 1, "no retry of a full disk")
            #expect(server.bodyBytesSent - bytesBefore < 300_000, "the server sent \(server.bodyBytesSent - bytesBefore) bytes")
            #expect(try contents(dir.appendingPathComponent("file.bin.part")) == partialBefore, "the partial is kept as it was")
            #expect(try contents(dir.appendingPathComponent("file.bin.resume")) == recordBefore, "the record is kept as it was")

            try FileManager.default.removeItem(at: filler)
            server.setResource("/file.bin", Validators.etag.resource(size: Self.size, seed: 4, rate: 0))
            let resumed = await runToEnd(downloader, DownloadRequest(url: url(server, "/file.bin")), to: .directory(dir))
            #expect(resumed.error == nil, "\(resumed.error?.description ?? "")")
            #expect(resumed.started?.resumedFrom == record.completed.byteCount)
            #expect(listFiles(dir) == ["file.bin"])
            #expect(try contents(dir.appendingPathComponent("file.bin")) == resource.bytes(0..<Self.size))
        }
    }

    /// The bytes an unprivileged writer may still use in the folder's file system.
    private func freeBytes(_ dir: URL) throws -> Int64 {
        var info = statvfs()
        try #require(statvfs(dir.path, &info) == 0)
        return Int64(info.f_bavail) * Int64(info.f_frsize)
    }
}
