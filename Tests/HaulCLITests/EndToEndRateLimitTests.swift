import Foundation
import HaulServer
import HaulTestSupport
import Testing

/// `--limit-rate` through the real command caps the transfer of every download together (the
/// suffixes' values are the parser's tests). Only the lower bound of the time is asserted: a
/// busy machine can make a run slower, never faster than the cap allows.
///
/// Exclusive: it times downloads under `--limit-rate`.
@Suite(.exclusive, .serialized, .timeLimit(.minutes(1)))
struct EndToEndRateLimitTests {
    @Test func theRateCapsAllDownloadsTogether() async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { (dir) async throws in
            // 2 x 300,000 bytes at 400 KiB/s (409,600 B/s): at least (600,000 - a tenth of a
            // second of burst) / 409,600 = 1.36 s for the two together; one alone would need
            // half of that, so 1.3 s also proves the rate is shared.
            let urls = [server.url("/bytes/300000/a.bin?seed=4"), server.url("/bytes/300000/b.bin?seed=5")]
            let clock = ContinuousClock()
            let started = clock.now
            let outcome = try await haul(["-q", "--limit-rate=400K", "-j", "2", "-d", dir.path] + urls, in: dir)
            let elapsed = clock.now - started

            #expect(outcome.status == 0, "\(outcome.standardError)")
            #expect(elapsed >= .milliseconds(1_300), "600,000 bytes in \(elapsed) is faster than 400 KiB/s")
            #expect(fileContents(dir.appendingPathComponent("a.bin")) == served(300_000, seed: 4))
            #expect(fileContents(dir.appendingPathComponent("b.bin")) == served(300_000, seed: 5))
        }
    }
}
