import Foundation
import HaulServer
import HaulTestSupport
import Synchronization
import Testing
@testable import Haul
import HaulCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A downloader whose system refuses threads: a download that gets no thread fails with
/// `resourceExhausted` (never a crash), and a segmented transfer whose extra connections get
/// none goes on with the connections it has.
@Suite("Downloads without threads", .throttled, .timeLimit(.minutes(1)))
struct ThreadRefusedTests {
    static let mib: Int64 = 1 << 20

    /// Starts threads, refusing (`EAGAIN`) those `refuses` picks by name and by how many of that
    /// name were asked for before (0 = the first); counts what started and what ended.
    final class Starter: Sendable {
        private let asked = SharedStateLock<[String: Int]>([:])
        let refused = Atomic<Int>(0)
        let started = Atomic<Int>(0)
        let ended = Atomic<Int>(0)
        private let refuses: @Sendable (_ name: String, _ before: Int) -> Bool

        init(refuses: @escaping @Sendable (_ name: String, _ before: Int) -> Bool) {
            self.refuses = refuses
        }

        /// How many threads of `name` were asked for.
        func asked(_ name: String) -> Int { asked.withLock { $0[name] ?? 0 } }

        var start: ThreadPool.Starter {
            { [self] name, body in
                let text = name.description
                let before = asked.withLock { asked in
                    defer { asked[text, default: 0] += 1 }
                    return asked[text] ?? 0
                }
                if refuses(text, before) {
                    refused.add(1, ordering: .relaxed)
                    return EAGAIN
                }
                let code = ThreadPool.systemStarter(name) { [self] in
                    body()
                    ended.add(1, ordering: .relaxed)
                }
                if code == 0 { started.add(1, ordering: .relaxed) }
                return code
            }
        }
    }

    /// A test downloader of `connections` connections whose threads `starter` starts.
    static func downloader(connections: Int, _ starter: Starter) -> Downloader {
        Downloader(configuration: testConfiguration { $0.connectionsPerDownload = connections }, threadStarter: starter.start)
    }

    @Test func aDownloadWithoutAThreadFailsWithResourceExhausted() async throws {
        // Given a downloader that gets no thread at all
        let starter = Starter(refuses: { _, _ in true })
        let downloader = Self.downloader(connections: 1, starter)
        try await withTemporaryDirectory { (dir) async throws in
            // When two downloads start (the second passes through the slot the first gives back)
            let url = URL(string: "http://127.0.0.1:9/never.bin")!
            let first = await collect(downloader.download(url, to: .directory(dir)))
            let second = await collect(downloader.download(URL(string: "http://127.0.0.1:9/other.bin")!, to: .directory(dir)))

            // Then each fails with the typed error, and nothing was written or counted
            for outcome in [first, second] {
                #expect(outcome.error?.code == .resourceExhausted)
                #expect(outcome.error?.code.exitStatus == 1)
                #expect(outcome.error?.message.hasPrefix("cannot start a thread: ") == true, "\(outcome.error?.message ?? "")")
            }
            #expect(starter.asked("haul-download") == 2)
            #expect(listFiles(dir).isEmpty)
            #expect(downloader.resources.threads.threadCount == 0)
        }
    }

    @Test func aSegmentedTransferWhoseOtherConnectionsGetNoThreadCompletesWithTheOne() async throws {
        // Given a 4-connection downloader whose first three segment threads are refused
        let starter = Starter(refuses: { name, before in name == "haul-segment" && before < 3 })
        let downloader = Self.downloader(connections: 4, starter)
        let server = try HaulServer()
        let size = 8 * Self.mib
        let resource = Validators.etag.resource(size: size)
        server.setResource("/big.bin", resource)
        try await withTemporaryDirectory { (dir) async throws in
            // When the file is downloaded
            let run = await runToEnd(downloader, DownloadRequest(url: url(server, "/big.bin")), to: .directory(dir))

            // Then it was planned for 4 connections, three got no thread, and the one left
            // fetched every byte
            #expect(run.error == nil, "\(run.error?.description ?? "")")
            #expect(run.started?.connections == 4)
            #expect(starter.asked("haul-segment") == 4)
            #expect(listFiles(dir) == ["big.bin"])
            #expect(try contents(dir.appendingPathComponent("big.bin")) == resource.bytes(0..<size))
            // and the pool counts only threads that started (and have not ended)
            let (started, ended, refused) = (starter.started.load(ordering: .acquiring), starter.ended.load(ordering: .acquiring),
                                             starter.refused.load(ordering: .acquiring))
            #expect(refused == 3)
            #expect(downloader.resources.threads.threadCount <= started - ended)
        }
    }

    @Test func aSegmentedTransferWithNoConnectionThreadFailsWithResourceExhausted() async throws {
        let starter = Starter(refuses: { name, _ in name == "haul-segment" })
        let downloader = Self.downloader(connections: 4, starter)
        let server = try HaulServer()
        let size = 8 * Self.mib
        server.setResource("/big.bin", Validators.etag.resource(size: size))
        try await withTemporaryDirectory { (dir) async throws in
            let run = await runToEnd(downloader, DownloadRequest(url: url(server, "/big.bin")), to: .directory(dir))

            #expect(run.error?.code == .resourceExhausted, "\(run.error?.description ?? "none")")
            #expect(starter.asked("haul-segment") == 4)
            #expect(!listFiles(dir).contains("big.bin"))
        }
    }
}

/// A single connection that runs for a few record intervals wants its checkpoint timer thread;
/// when that is refused, the transfer completes without it.
///
/// Exclusive: the file is paced by the server so that the transfer outlives a record interval.
@Suite("A timer thread refused", .exclusive, .serialized, .timeLimit(.minutes(1)))
struct TimerThreadRefusedTests {
    @Test func aSingleConnectionWhoseTimerThreadIsRefusedCompletes() async throws {
        // Given a downloader whose checkpoint timer threads are refused, and a file that takes a
        // few record intervals to arrive over one connection
        let starter = ThreadRefusedTests.Starter(refuses: { name, _ in name == "haul-checkpoint" })
        let downloader = ThreadRefusedTests.downloader(connections: 1, starter)
        let server = try HaulServer()
        let size = 2 * ThreadRefusedTests.mib
        let resource = Validators.etag.resource(size: size, rate: 8 << 20)
        server.setResource("/file.bin", resource)
        try await withTemporaryDirectory { (dir) async throws in
            // When it is downloaded
            let run = await runToEnd(downloader, DownloadRequest(url: url(server, "/file.bin")), to: .directory(dir))

            // Then the timer was asked for once (never again after the refusal) and the file is
            // complete, byte for byte (the transfer did not wait for a timer that never ran)
            #expect(starter.asked("haul-checkpoint") == 1)
            #expect(run.error == nil, "\(run.error?.description ?? "")")
            #expect(listFiles(dir) == ["file.bin"])
            #expect(try contents(dir.appendingPathComponent("file.bin")) == resource.bytes(0..<size))
        }
    }
}
