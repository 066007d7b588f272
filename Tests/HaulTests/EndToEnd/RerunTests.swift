import Foundation
import HaulServer
import HaulTestSupport
import Testing
@testable import Haul

/// Running a download again once it finished (a list rerun after an interruption): a file an
/// earlier run finished, unchanged on disk and on the server, is recognised by its mark
/// (``FinishedFileMark``) and left as it is; anything else is downloaded under the policy.
@Suite("Rerunning a finished download", .exclusive, .serialized, .timeLimit(.minutes(1)))
struct RerunTests {
    static let size: Int64 = 1_500_000

    /// First run at full speed; then the server sends slowly, so a second download of the body
    /// would show in the bytes it sent.
    static func finishedOnce(_ server: HaulServer, _ resource: HaulServer.Resource, path: String = "/file.bin",
                             to destination: Destination) async throws -> DownloadResult {
        server.setResource(path, resource)
        let first = try await testDownloader().file(from: DownloadRequest(url: url(server, path)), to: destination)
        var slow = resource
        slow.rate = 100_000
        server.setResource(path, slow)
        return first
    }

    static func inode(_ url: URL) throws -> UInt64 {
        try #require((try FileManager.default.attributesOfItem(atPath: url.path))[.systemFileNumber] as? UInt64)
    }

    @Test(arguments: Validators.allCases)
    func aFinishedFileIsLeftAsItIs(validators: Validators) async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { dir in
            let resource = validators.resource(size: Self.size, rate: nil)
            let first = try await Self.finishedOnce(server, resource, to: .directory(dir))
            #expect(first.alreadyComplete == false)
            let inode = try Self.inode(first.fileURL)
            let sentBefore = server.bodyBytesSent

            let second = await runToEnd(testDownloader(), DownloadRequest(url: url(server, "/file.bin")), to: .directory(dir))
            #expect(second.error == nil, "\(second.error?.description ?? "")")
            #expect(second.names == ["finished"], "nothing started: \(second.names)")
            let result = try await testDownloader().file(from: DownloadRequest(url: url(server, "/file.bin")), to: .directory(dir))
            #expect(result.alreadyComplete)
            #expect(!result.skipped)
            #expect(result.fileURL == first.fileURL)
            #expect(result.byteCount == Self.size)
            #expect(listFiles(dir) == ["file.bin"])
            #expect(try Self.inode(first.fileURL) == inode, "the file was not replaced")
            #expect(try contents(first.fileURL) == resource.bytes(0..<Self.size))
            #expect(server.bodyBytesSent - sentBefore < Self.size / 4, "the body was not downloaded again")
        }
    }

    /// A re-signed URL (another query) names the same resource.
    @Test func aReSignedURLFindsTheFile() async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { dir in
            server.setResource("/file.bin", Validators.etag.resource(size: Self.size, rate: nil))
            let first = try await testDownloader().file(from: DownloadRequest(url: url(server, "/file.bin?sig=one&expires=1")),
                                                        to: .directory(dir))
            let second = try await testDownloader().file(from: DownloadRequest(url: url(server, "/file.bin?sig=two&expires=2")),
                                                         to: .directory(dir))
            #expect(second.alreadyComplete)
            #expect(second.fileURL == first.fileURL)
            #expect(listFiles(dir) == ["file.bin"])
        }
    }

    /// Another URL took the name first, so this one's file is `file.1.bin`: the rerun finds it
    /// there, and the other URL's rerun finds its own.
    @Test func theNumberedNameOfAnEarlierRunIsFound() async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { dir in
            let other = try await Self.finishedOnce(server, Validators.etag.resource(size: 1000, seed: 7, rate: nil),
                                                    path: "/other/file.bin", to: .directory(dir))
            let mine = try await Self.finishedOnce(server, Validators.etag.resource(size: Self.size, rate: nil),
                                                   to: .directory(dir))
            #expect(other.fileURL.lastPathComponent == "file.bin")
            #expect(mine.fileURL.lastPathComponent == "file.1.bin")

            let again = try await testDownloader().file(from: DownloadRequest(url: url(server, "/file.bin")), to: .directory(dir))
            #expect(again.alreadyComplete)
            #expect(again.fileURL == mine.fileURL)
            let otherAgain = try await testDownloader().file(from: DownloadRequest(url: url(server, "/other/file.bin")),
                                                             to: .directory(dir))
            #expect(otherAgain.alreadyComplete)
            #expect(otherAgain.fileURL == other.fileURL)
            #expect(listFiles(dir) == ["file.1.bin", "file.bin"])
        }
    }

    /// A new version on the server is a new file: downloaded whole under the next name (the old
    /// one is kept, as for any existing file).
    @Test func aChangedFileOnTheServerIsDownloadedAgain() async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { dir in
            let old = Validators.etag.resource(size: Self.size, seed: 1, rate: nil)
            let first = try await Self.finishedOnce(server, old, to: .directory(dir))
            let new = Validators.etag.resource(size: Self.size, seed: 2, rate: nil, etag: "\"v2\"")
            server.setResource("/file.bin", new)
            let second = try await testDownloader().file(from: DownloadRequest(url: url(server, "/file.bin")), to: .directory(dir))
            #expect(!second.alreadyComplete)
            #expect(second.fileURL.lastPathComponent == "file.1.bin")
            #expect(try contents(second.fileURL) == new.bytes(0..<Self.size))
            #expect(try contents(first.fileURL) == old.bytes(0..<Self.size))
        }
    }

    /// A file changed on disk since (same length, its time moved) is not taken for the download.
    @Test func aFileChangedOnDiskIsDownloadedAgain() async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { dir in
            let resource = Validators.etag.resource(size: 100_000, rate: nil)
            let first = try await Self.finishedOnce(server, resource, to: .directory(dir))
            var edited = try contents(first.fileURL)
            edited[10] ^= 0xFF
            try Data(edited).write(to: first.fileURL)
            server.setResource("/file.bin", resource)
            let second = try await testDownloader().file(from: DownloadRequest(url: url(server, "/file.bin")), to: .directory(dir))
            #expect(!second.alreadyComplete)
            #expect(second.fileURL.lastPathComponent == "file.1.bin")
            #expect(try contents(second.fileURL) == resource.bytes(0..<100_000))
            #expect(try contents(first.fileURL) == edited)
        }
    }

    /// Without a validator the server cannot say whether its file changed: downloaded again.
    @Test func withoutAValidatorTheFileIsDownloadedAgain() async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { dir in
            let resource = HaulServer.Resource(size: 100_000, seed: 3)
            _ = try await Self.finishedOnce(server, resource, to: .directory(dir))
            server.setResource("/file.bin", resource)
            let second = try await testDownloader().file(from: DownloadRequest(url: url(server, "/file.bin")), to: .directory(dir))
            #expect(!second.alreadyComplete)
            #expect(listFiles(dir) == ["file.1.bin", "file.bin"])
        }
    }

    /// A checksum is checked again on the finished file: right, the file is done and its SHA-256
    /// reported; wrong, the file is not taken for this download (which then fails verification).
    @Test func aChecksumIsCheckedAgain() async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { dir in
            let resource = Validators.etag.resource(size: 100_000, rate: nil)
            let first = try await Self.finishedOnce(server, resource, to: .directory(dir))
            server.setResource("/file.bin", resource)
            let sha256 = SHA256.hex(resource.bytes(0..<100_000))
            var request = DownloadRequest(url: url(server, "/file.bin"))
            request.checksum = try Checksum(parsing: "sha256=\(sha256)")
            let right = try await testDownloader().file(from: request, to: .directory(dir))
            #expect(right.alreadyComplete)
            #expect(right.sha256 == sha256)
            #expect(right.fileURL == first.fileURL)

            request.checksum = try Checksum(parsing: "sha256=\(String(repeating: "0", count: 64))")
            let wrong = await expectFailure(testDownloader(), request, to: .directory(dir))
            #expect(wrong?.code == .checksumMismatch)
            #expect(listFiles(dir) == ["file.bin"])
            #expect(try contents(first.fileURL) == resource.bytes(0..<100_000))
        }
    }

    /// An exact destination (`-o`) is recognised too, whatever the policy; `startOver` downloads
    /// it again and replaces it.
    @Test func anExactDestinationIsRecognisedAndStartOverReplacesIt() async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { dir in
            let target = dir.appendingPathComponent("exact.dat")
            let resource = Validators.lastModified.resource(size: 100_000, rate: nil)
            _ = try await Self.finishedOnce(server, resource, to: .file(target))
            let inode = try Self.inode(target)
            server.setResource("/file.bin", resource)
            let again = try await testDownloader().file(from: DownloadRequest(url: url(server, "/file.bin")), to: .file(target))
            #expect(again.alreadyComplete)
            #expect(try Self.inode(target) == inode)

            var request = DownloadRequest(url: url(server, "/file.bin"))
            request.startOver = true
            let fresh = try await testDownloader().file(from: request, to: .file(target))
            #expect(!fresh.alreadyComplete)
            #expect(try Self.inode(target) != inode, "downloaded again and renamed into place")
            #expect(listFiles(dir) == ["exact.dat"])
            #expect(try contents(target) == resource.bytes(0..<100_000))
        }
    }
}
