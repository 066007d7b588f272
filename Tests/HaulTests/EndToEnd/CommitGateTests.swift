import Foundation
import HaulServer
import HaulTestSupport
import Synchronization
import Testing
@testable import Haul

/// `DownloadRequest.commitGate`: asked once per download, after the bytes are all there and
/// before the name; a refusal leaves no file of that name and fails `locked`.
@Suite("The commit gate", .throttled)
struct CommitGateTests {
    @Test(arguments: [1, 4])
    func aGateThatSaysNoLeavesTheFileUnnamed(connections: Int) async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { (dir) async throws in
            let asked = Atomic<Int>(0)
            var request = DownloadRequest(url: url(server, "/bytes/2000000/gated.bin"))
            request.connections = connections
            request.commitGate = {
                asked.add(1, ordering: .relaxed)
                return false
            }
            let refusal = await #expect(throws: DownloadError.self) { try await testDownloader().download(request, to: .directory(dir)).result() }
            #expect(refusal?.code == .locked)
            #expect(asked.load(ordering: .relaxed) == 1)
            #expect(!listFiles(dir).contains("gated.bin"), "\(listFiles(dir))")
            let kept = try FileManager.default.attributesOfItem(atPath: dir.appendingPathComponent("gated.bin.part").path)[.size] as? Int
            #expect(kept == 2_000_000, "the verified bytes stay for their owner")
        }
    }

    @Test func aGateThatSaysYesNamesTheFile() async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { (dir) async throws in
            let asked = Atomic<Int>(0)
            var request = DownloadRequest(url: url(server, "/bytes/300000/open.bin"))
            request.commitGate = {
                asked.add(1, ordering: .relaxed)
                return true
            }
            let result = try await testDownloader().download(request, to: .directory(dir)).result()
            #expect(try contents(result.fileURL) == expectedContent(300_000))
            #expect(asked.load(ordering: .relaxed) == 1)
        }
    }
}
