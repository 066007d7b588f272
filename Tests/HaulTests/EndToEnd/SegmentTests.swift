import Foundation
import HaulServer
import HaulTestSupport
import Testing
@testable import Haul
import HaulCore

/// A large file with validators and ranges is split across connections; small files, files
/// without validators and servers without ranges use one; a failed segment is retried alone.
///
/// Exclusive: segmented downloads are paced by the server.
@Suite("Segmented downloads", .exclusive, .serialized, .timeLimit(.minutes(1)))
struct SegmentTests {
    static let mib: Int64 = 1 << 20

    @Test func aLargeFileIsSplitAcrossConnectionsThatTogetherCoverIt() async throws {
        let server = try HaulServer()
        let size = 20 * Self.mib
        let resource = Validators.etag.resource(size: size, rate: 4 << 20)
        server.setResource("/big.bin", resource)
        try await withTemporaryDirectory { (dir) async throws in
            let run = await runToEnd(resumeDownloader(connections: 4), DownloadRequest(url: url(server, "/big.bin")), to: .directory(dir))

            #expect(run.error == nil, "\(run.error?.description ?? "")")
            #expect(run.started?.connections == 4)
            let ranges = server.requests.compactMap(requestedRange)
            #expect(ranges.count == server.requests.count, "every request is ranged")
            #expect(ranges.count >= 4)
            #expect(server.connectionCount >= 4)
            #expect(Set(ranges.map(\.first)).count >= 4, "at least four segments: \(ranges)")
            #expect(ranges.first.map { $0.first == 0 && $0.last == nil } == true, "the first asks from byte 0 to learn the file")
            for range in ranges.dropFirst() {
                #expect(range.first > 0 && range.first < size && (range.last ?? size) < size, "\(range)")
            }
            #expect(server.requests.dropFirst().allSatisfy { $0.header("If-Range") == "\"v1\"" })
            // The union of the asked ranges covers every byte.
            var covered = ByteRangeSet()
            for range in ranges { covered.insert(range.first..<((range.last ?? size - 1) + 1)) }
            #expect(covered.contains(0..<size))
            #expect(server.bodyBytesSent >= size)
            #expect(server.bodyBytesSent < size * 11 / 10, "segments overlapped: \(server.bodyBytesSent) bytes sent for \(size)")
            #expect(listFiles(dir) == ["big.bin"])
            #expect(try contents(dir.appendingPathComponent("big.bin")) == resource.bytes(0..<size))
        }
    }

    @Test func aSmallFileUsesOneRequest() async throws {
        let server = try HaulServer()
        let size: Int64 = 1_500_000
        let resource = Validators.etag.resource(size: size)
        server.setResource("/small.bin", resource)
        try await withTemporaryDirectory { (dir) async throws in
            let run = await runToEnd(resumeDownloader(connections: 4), DownloadRequest(url: url(server, "/small.bin")), to: .directory(dir))
            #expect(run.error == nil, "\(run.error?.description ?? "")")
            #expect(server.requests.count == 1)
            #expect(server.bodyBytesSent == size)
            #expect(try contents(dir.appendingPathComponent("small.bin")) == resource.bytes(0..<size))
        }
    }

    @Test
    func aSmallFileReportsOneConnection() async throws {
        let server = try HaulServer()
        server.setResource("/small.bin", Validators.etag.resource(size: 1_500_000))
        try await withTemporaryDirectory { (dir) async throws in
            let run = await runToEnd(resumeDownloader(connections: 4), DownloadRequest(url: url(server, "/small.bin")), to: .directory(dir))
            #expect(run.error == nil)
            #expect(run.started?.connections == 1)
        }
    }

    /// Without a validator a segment cannot be checked against the file; without ranges none can be asked.
    enum Unsplittable: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case noValidators, ignoresRange

        var resource: HaulServer.Resource {
            switch self {
            case .noValidators: HaulServer.Resource(size: 6 << 20, seed: 3, rate: 0)
            case .ignoresRange: HaulServer.Resource(size: 6 << 20, seed: 3, etag: "\"v1\"", ignoresRange: true, rate: 0)
            }
        }

        var testDescription: String { rawValue }
    }

    @Test(arguments: Unsplittable.allCases)
    func aFileThatCannotBeSplitUsesOneConnection(kind: Unsplittable) async throws {
        let server = try HaulServer()
        let resource = kind.resource
        server.setResource("/one.bin", resource)
        try await withTemporaryDirectory { (dir) async throws in
            let run = await runToEnd(resumeDownloader(connections: 4), DownloadRequest(url: url(server, "/one.bin")), to: .directory(dir))
            #expect(run.error == nil, "\(run.error?.description ?? "")")
            #expect(run.started?.connections == 1)
            #expect(server.requests.count == 1)
            #expect(server.connectionCount == 1)
            #expect(server.bodyBytesSent == resource.size)
            #expect(listFiles(dir) == ["one.bin"])
            #expect(try contents(dir.appendingPathComponent("one.bin")) == resource.bytes(0..<resource.size))
        }
    }

    @Test func aSegmentWhoseConnectionDropsIsRetriedFromWhereItStopped() async throws {
        let server = try HaulServer()
        let size = 8 * Self.mib
        let cut: Int64 = 256 << 10
        let served = FlakyFile(size: size, cutAfter: cut)
        server.route("/flaky.bin") { request, connection in try served.respond(to: request, on: connection) }
        try await withTemporaryDirectory { (dir) async throws in
            let run = await runToEnd(resumeDownloader(connections: 4), DownloadRequest(url: url(server, "/flaky.bin")), to: .directory(dir))

            #expect(run.error == nil, "\(run.error?.description ?? "")")
            let cutStart = try #require(served.cutStart, "no segment request was cut")
            let ranges = server.requests.compactMap(requestedRange)
            #expect(ranges.count == server.requests.count)
            #expect(ranges.contains { $0.first == cutStart + cut }, "the rest of the cut segment is asked again: \(ranges)")
            #expect(server.requests.count <= 12, "only the failed segment is retried: \(ranges)")
            #expect(listFiles(dir) == ["flaky.bin"])
            #expect(try contents(dir.appendingPathComponent("flaky.bin")) == HaulServer.content(seed: 5).bytes(0..<size))
        }
    }

    @Test func segmentsThatKeepDroppingStillComplete() async throws {
        let server = try HaulServer()
        let size: Int64 = 4_000_000
        try await withTemporaryDirectory { (dir) async throws in
            let downloader = resumeDownloader(connections: 4) { $0.retry.maximumRetries = 2 }
            let address = url(server, "/bytes/\(size)/drops.bin?seed=4&drop-after=300000&rate=3000000")
            let run = await runToEnd(downloader, DownloadRequest(url: address), to: .directory(dir))

            #expect(run.error == nil, "\(run.error?.description ?? "")")
            #expect(server.requests.count >= Int(size / 300_000))
            #expect(listFiles(dir) == ["drops.bin"])
            #expect(try contents(dir.appendingPathComponent("drops.bin")) == HaulServer.content(seed: 4).bytes(0..<size))
        }
    }
}

/// A route serving `size` bytes of `content(seed: 5)` with a strong ETag and ranges, paced
/// at 2 MiB/s per connection, that cuts exactly one response: the first ranged request that
/// starts after byte 0 gets its head (announcing its whole range) and `cutAfter` bytes, then
/// the connection closes.
final class FlakyFile: Sendable {
    let size: Int64
    let cutAfter: Int64
    private let cut = SharedStateLock<Int64?>(nil)

    init(size: Int64, cutAfter: Int64) {
        self.size = size
        self.cutAfter = cutAfter
    }

    /// The start of the range whose response was cut, once it happened.
    var cutStart: Int64? { cut.withLock { $0 } }

    func respond(to request: RecordedRequest, on connection: ServerConnection) throws {
        var range = 0..<size
        var status = "200 OK"
        if let asked = requestedRange(request) {
            range = asked.first..<min(size, (asked.last ?? size - 1) + 1)
            status = "206 Partial Content"
        }
        let cutHere = range.lowerBound > 0 && cut.withLock { cut in
            guard cut == nil else { return false }
            cut = range.lowerBound
            return true
        }
        var head = "HTTP/1.1 \(status)\r\nContent-Length: \(range.count)\r\nETag: \"v1\"\r\nAccept-Ranges: bytes\r\n"
        if status.hasPrefix("206") { head += "Content-Range: bytes \(range.lowerBound)-\(range.upperBound - 1)/\(size)\r\n" }
        try connection.write(head + "Connection: close\r\n\r\n")
        let content = HaulServer.content(seed: 5)
        let end = cutHere ? range.lowerBound + cutAfter : range.upperBound
        let chunk: Int64 = 64 << 10
        var offset = range.lowerBound
        while offset < end {
            let next = min(end, offset + chunk)
            try connection.write(content.bytes(offset..<next))
            offset = next
            connection.sleep(seconds: Double(chunk) / Double(2 << 20))
        }
    }
}
