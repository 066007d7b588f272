import Foundation
import HaulServer
import HaulTestSupport
import Testing
@testable import Haul

/// While one download writes a file, any other download aimed at the same file (from another
/// `Downloader`, or under another key) fails with `locked` and touches nothing: no request,
/// no file created, removed or changed.
///
/// Exclusive: a download paced at 500 kB/s is held running while a second one starts.
@Suite("The lock on a partial file", .exclusive, .serialized, .timeLimit(.minutes(1)))
struct ResumeLockTests {
    static let size: Int64 = 20_000_000

    /// Starts a slow download of `/file.bin` into `destination` and waits until its bytes flow.
    static func startSlow(_ server: HaulServer, to destination: Destination) async -> (Downloader, Download) {
        // 4 connections at 500 kB/s each: about ten seconds for the whole file.
        server.setResource("/file.bin", Validators.etag.resource(size: size, rate: 500_000))
        let downloader = resumeDownloader(connections: 4)
        let download = downloader.download(url(server, "/file.bin"), to: destination)
        #expect(await eventually { server.bodyBytesSent >= 300_000 }, "the first download does not progress")
        // The resume record is first written at the first checkpoint.
        let record = (destination.folderPath as NSString).appendingPathComponent("file.bin.resume")
        #expect(await eventually { FileManager.default.fileExists(atPath: record) }, "no resume record yet")
        return (downloader, download)
    }

    @Test(arguments: ["another downloader", "another key"])
    func aSecondDownloadOfTheSameFileFailsLockedAndTouchesNothing(how: String) async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { (dir) async throws in
            let target = dir.appendingPathComponent("file.bin")
            let (downloader, first) = await Self.startSlow(server, to: .file(target))
            let filesBefore = Self.files(in: dir)
            let recordBefore = try Data(contentsOf: dir.appendingPathComponent("file.bin.resume"))
            #expect(filesBefore == ["file.bin.part", "file.bin.resume"])

            let second: Downloader = how == "another key" ? downloader : resumeDownloader(connections: 4)
            var request = DownloadRequest(url: url(server, "/file.bin?other=1"))
            request.key = "second"
            let error = await expectFailure(second, request, to: .file(target))

            #expect(error?.code == .locked, "\(error?.description ?? "finished")")
            #expect(error?.code.exitStatus == 11)
            #expect(!server.requests.contains { $0.target.contains("other=1") }, "the second download sent a request")
            #expect(Self.files(in: dir) == filesBefore)
            #expect(await eventually { server.bodyBytesSent > 600_000 }, "the first download stopped")
            #expect(!FileManager.default.fileExists(atPath: target.path))

            // The first goes on undisturbed: cancel it, and its resume (now fast) is byte-identical.
            first.cancel()
            _ = try? await first.result()
            #expect(try Data(contentsOf: dir.appendingPathComponent("file.bin.resume")) != recordBefore, "the first kept writing its record")
            server.setResource("/file.bin", Validators.etag.resource(size: Self.size, rate: 0))
            let rerun = await runToEnd(resumeDownloader(connections: 4), DownloadRequest(url: url(server, "/file.bin")), to: .file(target))
            #expect(rerun.error == nil, "\(rerun.error?.description ?? "")")
            #expect((rerun.started?.resumedFrom ?? 0) > 0)
            #expect(listFiles(dir) == ["file.bin"])
            #expect(try contents(target) == HaulServer.content(seed: 1).bytes(0..<Self.size))
        }
    }

    /// The files in `dir`, without the record's temporary file (`NAME.rtmp` exists for an
    /// instant each time the running download writes its record).
    static func files(in dir: URL) -> [String] {
        listFiles(dir).filter { !$0.hasSuffix(".rtmp") }
    }
}

extension Destination {
    /// The folder the file lands in.
    var folderPath: String {
        switch self {
        case .directory(let url): url.path
        case .file(let url): url.deletingLastPathComponent().path
        case .contained(let root, let folder, _): folder.isEmpty ? root.path : root.path + "/" + folder
        }
    }
}
