import Foundation
import Haul
import HaulServer
import HaulTestSupport
import Testing

/// A downloader's connections to one host resume the TLS session of the first: the extra
/// connections of a segmented download and the next download's; another downloader does not.
@Suite("TLS session resumption", .throttled)
struct TLSResumptionTests {
    @Test func theExtraConnectionsOfASegmentedDownloadAndTheNextDownloadResume() async throws {
        let certificates = TestCertificates.shared
        let server = try HaulServer(configuration: .init(tls: certificates.serverIdentity))
        let size = 16 << 20
        // `Connection: close`: no connection is kept for the next download, each is a new handshake.
        let path = "/bytes/\(size)/big.bin?header=Connection:close"
        try await withTemporaryDirectory { (dir) async throws in
            let downloader = resumeDownloader(connections: 4) { $0.tls = .init(extraCAFile: certificates.caFile) }
            let first = await runToEnd(downloader, DownloadRequest(url: url(server, path)), to: .directory(dir))
            #expect(first.error == nil, "\(first.error?.description ?? "")")
            #expect(first.started?.connections == 4)
            let connections = server.connectionCount
            #expect(connections >= 4)
            #expect(server.resumedTLSHandshakeCount >= 3)
            #expect(server.resumedTLSHandshakeCount == connections - 1, "every connection after the first resumes")
            #expect(try contents(dir.appendingPathComponent("big.bin")) == expectedContent(size))

            let second = await runToEnd(downloader, DownloadRequest(url: url(server, "/bytes/1000/small.bin?header=Connection:close")),
                                        to: .directory(dir))
            #expect(second.error == nil, "\(second.error?.description ?? "")")
            #expect(server.connectionCount == connections + 1)
            #expect(server.resumedTLSHandshakeCount == connections, "the next download resumes too")

            let other = resumeDownloader { $0.tls = .init(extraCAFile: certificates.caFile) }
            let third = await runToEnd(other, DownloadRequest(url: url(server, "/bytes/1000/other.bin?header=Connection:close")),
                                       to: .directory(dir))
            #expect(third.error == nil, "\(third.error?.description ?? "")")
            #expect(server.resumedTLSHandshakeCount == connections, "another downloader has sessions of its own")
        }
    }
}
