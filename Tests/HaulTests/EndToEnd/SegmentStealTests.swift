import Foundation
import Haul
import HaulServer
import HaulTestSupport
import Testing

@Suite("Ranges taken over while a connection writes", .throttled)
struct SegmentStealTests {
    @Test("fast segmented downloads with 1 MiB reads finish intact (a piece written past a taken-over end is never recorded)",
          .timeLimit(.minutes(1)))
    func takeOversDuringLargeReads() async throws {
        // Unpaced, 4 connections, 1 MiB reads: connections finish at different moments and take
        // over each other's ends, often while the owner is still writing a whole read past it.
        // Every checkpoint's record must still hold non-overlapping checksums (saving one that
        // does not would fail the download with internalError).
        let server = try HaulServer()
        try await withTemporaryDirectory { dir in
            let downloader = testDownloader { configuration in
                configuration.bufferSize = 1 << 20
                configuration.connectionsPerDownload = 4
                configuration.resumeRecordInterval = .milliseconds(10)
            }
            for seed in 1...4 {
                let result = try await downloader.file(from: url(server, "/bytes/40000000/s\(seed).bin?seed=\(seed)"), to: .directory(dir))
                #expect(try contents(result.fileURL) == expectedContent(40_000_000, seed: UInt64(seed)))
            }
            #expect(listFiles(dir) == ["s1.bin", "s2.bin", "s3.bin", "s4.bin"])
        }
    }
}
