import Foundation
import HaulServer
import HaulTestSupport
import Testing
@testable import Haul
import HaulCrypto
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// On ext4 and XFS a segmented download of a file larger than the batch committer takes writes
/// its whole blocks past the page cache (`O_DIRECT`), over several connections with a checksum
/// too (its hasher reads past the cache). What is left in the page cache afterwards tells which
/// way the bytes went (`mincore`). Under a rate limit the bytes go through the page cache.
///
/// Exclusive: transfers are paced and rate-limited, and the page cache they leave is measured.
@Suite("Direct writes end to end", .exclusive, .serialized, .timeLimit(.minutes(1)))
struct DirectWriteTests {
    /// How many of the file's pages are in the page cache, and how many it has.
    static func residentPages(_ file: URL) throws -> (resident: Int, pages: Int) {
        #if os(Linux)
        let fd = open(file.path, O_RDONLY)
        guard fd >= 0 else { throw POSIXError(.ENOENT) }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_size > 0 else { return (0, 0) }
        let length = Int(info.st_size)
        guard let map = mmap(nil, length, PROT_READ, MAP_SHARED, fd, 0), map != MAP_FAILED else { throw POSIXError(.ENOMEM) }
        defer { munmap(map, length) }
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        var vector = [UInt8](repeating: 0, count: (length + page - 1) / page)
        guard mincore(map, length, &vector) == 0 else { throw POSIXError(.EINVAL) }
        return (vector.filter { $0 & 1 != 0 }.count, vector.count)
        #else
        return (0, 0)
        #endif
    }

    /// Whether `dir` is on a file system that takes direct writes (else the test has nothing to see).
    static func takesDirectWrites(_ dir: URL) throws -> Bool {
        PartialFile.takesDirectWrites(fileSystemType: try DownloadTarget(destination: .directory(dir), folders: FolderRegistry()).folder.fileSystemType)
    }

    @Test func aLargeFileOverFourConnectionsLeavesThePageCacheAlone() async throws {
        let server = try HaulServer()
        let size: Int64 = 20 << 20 + 12_345   // not a whole number of blocks
        let resource = Validators.etag.resource(size: size, rate: 8 << 20)
        server.setResource("/big.bin", resource)
        try await withTemporaryDirectory { (dir) async throws in
            let run = await runToEnd(resumeDownloader(connections: 4), DownloadRequest(url: url(server, "/big.bin")), to: .directory(dir))
            #expect(run.error == nil, "\(run.error?.description ?? "")")
            #expect(run.started?.connections == 4)
            let file = dir.appendingPathComponent("big.bin")
            if try Self.takesDirectWrites(dir) {   // looked at before reading the file brings it in
                let (resident, pages) = try Self.residentPages(file)
                // Only the blocks at the segments' edges went through the cache.
                #expect(pages > 5_000 && resident < pages / 50, "\(resident) of \(pages) pages in the page cache")
            }
            #expect(try contents(file) == resource.bytes(0..<size))
        }
    }

    @Test func withAChecksumTheBytesStillGoPastThePageCacheAndAreVerified() async throws {
        let server = try HaulServer()
        let size: Int64 = 40 << 20 + 12_345   // several in-order pieces per connection
        let resource = Validators.etag.resource(size: size, rate: 16 << 20)
        server.setResource("/summed.bin", resource)
        let checksum = try Checksum(algorithm: .sha256, expected: Digest.hash(.sha256, resource.bytes(0..<size)))
        try await withTemporaryDirectory { (dir) async throws in
            let run = await runToEnd(resumeDownloader(connections: 4),
                                     DownloadRequest(url: url(server, "/summed.bin"), checksum: checksum), to: .directory(dir))
            #expect(run.error == nil, "\(run.error?.description ?? "")")
            #expect(run.started?.connections == 4)
            let file = dir.appendingPathComponent("summed.bin")
            if try Self.takesDirectWrites(dir) {
                let (resident, pages) = try Self.residentPages(file)
                #expect(pages > 10_000 && resident < pages / 50, "\(resident) of \(pages) pages in the page cache")
            }
            #expect(try contents(file) == resource.bytes(0..<size))
        }
    }

    @Test func underARateLimitTheBytesGoThroughThePageCache() async throws {
        let server = try HaulServer()
        let size: Int64 = 17 << 20
        let resource = Validators.etag.resource(size: size)
        server.setResource("/limited.bin", resource)
        try await withTemporaryDirectory { (dir) async throws in
            let downloader = resumeDownloader(connections: 4) { $0.rateLimit = 64 << 20 }
            let run = await runToEnd(downloader, DownloadRequest(url: url(server, "/limited.bin")), to: .directory(dir))
            #expect(run.error == nil, "\(run.error?.description ?? "")")
            guard try Self.takesDirectWrites(dir) else { return }
            let file = dir.appendingPathComponent("limited.bin")
            let (resident, pages) = try Self.residentPages(file)
            #expect(resident > pages * 9 / 10, "\(resident) of \(pages) pages in the page cache")
            #expect(try contents(file) == resource.bytes(0..<size))
        }
    }
}
