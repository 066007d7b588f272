import CHaulSys
import Foundation
import Synchronization
import HaulServer
import HaulTestSupport
import Testing
@testable import Haul
import HaulCore
import HaulHTTP
import HaulCrypto

/// Running a download again once it finished (a list rerun after an interruption): a file an
/// earlier run finished, unchanged on disk and on the server, is recognised by its mark
/// (``FinishedFileMark``) and left as it is; anything else is downloaded under the policy.
///
/// Exclusive: after a first run the server paces the file at 100 kB/s, so that a second download
/// of its body would show.
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
    /// The edit is made in place (the mark stays on the file) and, for `restoringTime`, the
    /// modification time is put back, so that only the length tells.
    @Test(arguments: [false, true])
    func aFileChangedOnDiskIsDownloadedAgain(restoringTime: Bool) async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { dir in
            let resource = Validators.etag.resource(size: 100_000, rate: nil)
            let first = try await Self.finishedOnce(server, resource, to: .directory(dir))
            var before = stat()
            try #require(stat(first.fileURL.path, &before) == 0)
            var edited = try contents(first.fileURL)
            if restoringTime { edited.append(1) } else { edited[10] ^= 0xFF }
            let handle = try FileHandle(forWritingTo: first.fileURL)   // in place: no new inode
            try handle.write(contentsOf: Data(edited))
            try handle.close()
            if restoringTime {
                let times = [before.st_atim, before.st_mtim]
                try #require(utimensat(AT_FDCWD, first.fileURL.path, times, 0) == 0)
            }
            let descriptor = open(first.fileURL.path, O_RDONLY)
            var mark = [UInt8](repeating: 0, count: 64)
            #expect(haul_get_attribute(descriptor, FinishedFileMark.attributeName, &mark, mark.count) == 45, "the mark is still there")
            close(descriptor)
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

    /// An exact destination (`-o`) is recognised too (unless the policy is `overwrite`);
    /// `startOver` downloads it again and replaces it.
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

    /// `startOver` holds for every attempt: a retry after a failed first attempt downloads too.
    @Test func startOverHoldsAcrossRetries() async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { dir in
            var resource = Validators.etag.resource(size: 100_000, rate: nil)
            let first = try await Self.finishedOnce(server, resource, to: .directory(dir))
            let refused = Atomic<Int>(0)
            resource.gate = { _ in
                refused.add(1, ordering: .relaxed).oldValue == 0 ? .init(status: 503, body: "busy", contentType: "text/plain") : nil
            }
            server.setResource("/file.bin", resource)
            var request = DownloadRequest(url: url(server, "/file.bin"))
            request.startOver = true
            let again = try await resumeDownloader().file(from: request, to: .directory(dir))
            #expect(refused.load(ordering: .relaxed) == 2, "refused once, then answered")
            #expect(!again.alreadyComplete)
            #expect(again.fileURL.lastPathComponent == "file.1.bin")
            #expect(try contents(again.fileURL) == resource.bytes(0..<100_000))
            #expect(try contents(first.fileURL) == resource.bytes(0..<100_000))
        }
    }

    /// The resource key leaves the query out (re-signed URLs), so a URL with a query is
    /// recognised by a strong ETag only: `get?id=1` and `get?id=2` may share a length and a date.
    @Test func aQueryNeedsAStrongETag() async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { dir in
            server.setResource("/get", Validators.lastModified.resource(size: 50_000, seed: 1, rate: nil))
            let one = try await testDownloader().file(from: DownloadRequest(url: url(server, "/get?id=1")), to: .directory(dir))
            server.setResource("/get", Validators.lastModified.resource(size: 50_000, seed: 2, rate: nil))
            let two = try await testDownloader().file(from: DownloadRequest(url: url(server, "/get?id=2")), to: .directory(dir))
            #expect(!two.alreadyComplete)
            #expect(two.fileURL.lastPathComponent == "get.1")
            #expect(try contents(two.fileURL) == HaulServer.content(seed: 2).bytes(0..<50_000))
            #expect(try contents(one.fileURL) == HaulServer.content(seed: 1).bytes(0..<50_000))
        }
    }

    /// A leftover partial of the same name whose record cannot be trusted goes when the finished
    /// file is recognised: only the file remains.
    @Test func anUntrustedLeftoverPartialIsRemoved() async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { dir in
            let resource = Validators.etag.resource(size: 100_000, rate: nil)
            _ = try await Self.finishedOnce(server, resource, to: .directory(dir))
            try Data(repeating: 7, count: 5_000).write(to: dir.appendingPathComponent("file.bin.part"))
            try Data("garbage".utf8).write(to: dir.appendingPathComponent("file.bin.resume"))
            server.setResource("/file.bin", resource)
            let again = await runToEnd(testDownloader(), DownloadRequest(url: url(server, "/file.bin")), to: .directory(dir))
            #expect(again.error == nil)
            #expect(again.startingOver.count == 1, "the partial was not trusted: \(again.names)")
            #expect(listFiles(dir) == ["file.bin"])
        }
    }

    /// `--on-conflict=overwrite` asks for the file to be replaced, `skip` for it to be kept as it
    /// is: neither looks at the mark.
    @Test func overwriteReplacesAndSkipSkips() async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { dir in
            let resource = Validators.etag.resource(size: 100_000, rate: nil)
            let first = try await Self.finishedOnce(server, resource, to: .directory(dir))
            let inode = try Self.inode(first.fileURL)
            server.setResource("/file.bin", resource)
            let skipped = try await testDownloader().file(from: DownloadRequest(url: url(server, "/file.bin"), conflictPolicy: .skip),
                                                          to: .directory(dir))
            #expect(skipped.skipped && !skipped.alreadyComplete)
            let replaced = try await testDownloader().file(from: DownloadRequest(url: url(server, "/file.bin"), conflictPolicy: .overwrite),
                                                           to: .directory(dir))
            #expect(!replaced.alreadyComplete && !replaced.skipped)
            #expect(replaced.fileURL == first.fileURL)
            #expect(try Self.inode(first.fileURL) != inode, "replaced by a new download")
            #expect(listFiles(dir) == ["file.bin"])
        }
    }

    /// An exact destination another running download of this process is writing is locked, even
    /// though the file under that name is this URL's, finished: it is about to be replaced. (Here
    /// the partial file's lock says so first; the check of the name's reservation in
    /// `DownloadTarget.choose` covers the instants when no partial is locked.)
    @Test func aNameBeingWrittenIsNotRecognised() async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { dir in
            let target = dir.appendingPathComponent("exact.dat")
            var resource = Validators.etag.resource(size: 400_000, rate: nil)
            _ = try await Self.finishedOnce(server, resource, to: .file(target))
            resource.rate = 100_000
            server.setResource("/file.bin", resource)
            var fresh = DownloadRequest(url: url(server, "/file.bin"))
            fresh.startOver = true
            let downloader = testDownloader()
            let writing = downloader.download(fresh, to: .file(target))
            for try await event in writing.events { if case .progress = event { break } }
            // Another downloader: this one's queue would hold the second download until the first ended.
            let second = await expectFailure(testDownloader(), DownloadRequest(url: url(server, "/file.bin")), to: .file(target))
            #expect(second?.code == .locked)
            writing.cancel()
        }
    }
}

/// A rerun that finds its finished file checks it (here against a checksum) before it says so;
/// a cancellation stops that check.
@Suite("Cancelling the check of a finished file", .throttled, .timeLimit(.minutes(1)))
struct RerunCheckCancellationTests {
    /// A cancellation while a large finished file's checksum is checked again ends the download
    /// at once with `cancelled`, and nothing is written (no `file.1.bin`): the check stops
    /// between reads. (Without that stop, the check ran to its end and the download ended
    /// `alreadyComplete`.)
    @Test func aCancellationStopsTheCheckOfAFinishedFile() async throws {
        let size: Int64 = 1 << 30   // its check takes half a second or more: the cancel comes 20 ms in
        let server = try HaulServer()
        server.setResource("/file.bin", Validators.etag.resource(size: size, rate: nil))
        try await withTemporaryDirectory { dir in
            // A finished file of zeros (sparse), marked as this URL's download.
            let file = dir.appendingPathComponent("file.bin")
            let fd = open(file.path, O_RDWR | O_CREAT, 0o644)
            try #require(fd >= 0)
            try #require(ftruncate(fd, off_t(size)) == 0)
            let identity = try #require(FinishedFileMark.Identity(
                resourceKey: ResumeRecord.resourceKey(for: try HTTPURL.parse(url(server, "/file.bin").absoluteString)),
                length: size, etag: "\"v1\"", lastModified: nil))
            FinishedFileMark.write(identity, to: fd)
            close(fd)
            var request = DownloadRequest(url: url(server, "/file.bin"))
            // The SHA-256 of 1 GiB of zeros (`head -c 1073741824 /dev/zero | sha256sum`).
            request.checksum = try Checksum(parsing: "sha256=49bc20df15e412a64472421e13fe86ff1c5165e18b2afccf160d4dc19fe68a14")

            let recognised = try await testDownloader().file(from: request, to: .directory(dir))
            #expect(recognised.alreadyComplete, "the set-up: the file is recognised when nothing cancels")

            let requestsBefore = server.requests.count
            let download = testDownloader().download(request, to: .directory(dir))
            // Watched at high priority: this suite's tests run at low priority, and on a loaded
            // machine a late cancel came after the check had ended.
            try await Task.detached(priority: .high) {
                while server.requests.count == requestsBefore { try await Task.sleep(for: .milliseconds(2)) }
                try await Task.sleep(for: .milliseconds(20))
                download.cancel()
            }.value
            do throws(DownloadError) {
                let result = try await download.result()
                Issue.record("expected a cancellation, got \(result)")
            } catch {
                #expect(error.code == .cancelled)
            }
            #expect(listFiles(dir) == ["file.bin"])
        }
    }
}
