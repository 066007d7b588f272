import Foundation
import HaulServer
import HaulTestSupport
import Testing
@testable import Haul
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import HaulCore

/// `kill -9` at any instant of a segmented download leaves a state that the same command,
/// run again, continues from: the resume record never claims a byte that is not on disk nor
/// drops one it claimed, each run asks only for bytes the record lacks, the final file is
/// byte-identical, and the server sends each byte about once.
///
/// Exclusive: it kills `haul` at random moments of a finely paced download and bounds the bytes sent.
@Suite(.exclusive, .serialized, .timeLimit(.minutes(3)))
struct EndToEndKillTests {
    /// Above 16 MiB, so the connections write past the page cache where the folder allows it
    /// (see DirectStaging); 4 connections at 500 kB/s each: a full run takes about 9 s.
    static let size: Int64 = 17_000_000
    static let perConnectionRate = 500_000
    static let connections = 4
    static let kills = 20

    /// What one kill may cost, over all connections. A kill loses, on each connection, the bytes
    /// that arrived after the last resume record that reached disk: a record is taken every
    /// 25 ms (`resumeRecordInterval`), staged bytes are written at least as often, and the
    /// record is written once the bytes it claims are synced, so allow 100 ms of the connection's
    /// pace for the interval and the sync on a loaded disk (measured: 70 ms on average with the
    /// machine busy), plus the one 4 KiB write that was on its way when the socket closed.
    static let lossPerKill = Int64(connections) * (Int64(perConnectionRate) / 10 + 4096)

    /// Runs `haul -x 4` 20 times, each killed with SIGKILL after a random 0.1-0.6 s, checking the
    /// files and the requests after each kill, then once to its end, checking the result and
    /// what the server sent.
    @Test func sigkillAtTwentyRandomMomentsThenRerunningFinishesByteIdenticalAndSendsEachByteAboutOnce() async throws {
        let server = try HaulServer()
        let content = HaulServer.content(seed: 11)
        let file = FinelyPacedFile(size: Self.size, seed: 11, etag: "\"k1\"", bytesPerSecond: Self.perConnectionRate)
        server.route("/kill.bin") { request, connection in try file.respond(to: request, on: connection) }
        try await withTemporaryDirectory { (dir) async throws in
            let arguments = ["-q", "-x", "\(Self.connections)", "-d", dir.path, server.url("/kill.bin")]
            var random = SplitMix64(seed: 0x5EED_2026)
            var killed = 0
            var claimed = ByteRangeSet()          // what the record on disk claims, after the last kill
            var lost: [Int64] = []                // per kill: bytes sent in that run that its record does not claim
            for round in 0..<Self.kills {
                let requestsBefore = server.requests.count, sentBefore = file.bodyBytesSent
                let process = try KillableProcess(arguments, in: dir)
                let delay = 0.1 + 0.5 * random.nextUnitDouble()
                try await Task.sleep(for: .milliseconds(Int(delay * 1000)))
                let status = await process.sigkill()
                if status == 128 + SIGKILL { killed += 1 } else {
                    Issue.record("round \(round): haul ended with \(status) before the kill")
                }
                // The server's counters are final for this run once its connections are closed.
                #expect(await eventually(timeout: .seconds(10)) { server.openConnectionCount == 0 }, "round \(round)")

                // Each request of this run started at a byte the record it found did not claim:
                // nothing it had is asked for again (a run that started over would ask for byte 0).
                for request in server.requests.dropFirst(requestsBefore) {
                    let start = RangedAnswer(to: request, size: Self.size, etag: file.etag).range.lowerBound
                    #expect(!claimed.contains(start..<(start + 1)),
                            "round \(round): asked for \(request.header("Range") ?? "everything") though the record claims \(claimed.ranges)")
                }
                // Whatever the kill interrupted, the record (if any) claims only bytes that are there.
                let files = listFiles(dir)
                #expect(files.allSatisfy { ["kill.bin.part", "kill.bin.resume", "kill.bin.rtmp"].contains($0) }, "round \(round): \(files)")
                // Saved as temporary + rename, the record on disk is always a whole one.
                let loaded = Self.loadRecord(in: dir)
                if case .invalid(let why) = loaded { Issue.record("round \(round): \(why)") }
                var now = ByteRangeSet()
                if case .valid(let record) = loaded {
                    #expect(record.totalLength == Self.size)
                    now = record.completed
                    let partial = try Data(contentsOf: dir.appendingPathComponent("kill.bin.part"))
                    for range in record.completed.ranges {
                        let onDisk = partial.count >= Int(range.upperBound) ? [UInt8](partial[Int(range.lowerBound)..<Int(range.upperBound)]) : []
                        #expect(onDisk == content.bytes(range), "round \(round): the record claims \(range), which is not on disk")
                    }
                }
                // A kill never takes back what a record had claimed.
                #expect(claimed.ranges.allSatisfy { now.contains($0) }, "round \(round): \(claimed.ranges) became \(now.ranges)")
                lost.append((file.bodyBytesSent - sentBefore) - (now.byteCount - claimed.byteCount))
                claimed = now
            }
            #expect(killed == Self.kills)

            // The same bytes, four times faster for the last run (still in 4 KiB writes: the count stays exact).
            file.pace(4 * Self.perConnectionRate)
            let sentBeforeFinal = file.bodyBytesSent
            let final = try await haul(arguments, in: dir, timeout: .seconds(60))
            #expect(final.status == 0, "\(final.standardError)")
            #expect(listFiles(dir) == ["kill.bin"])
            #expect(fileContents(dir.appendingPathComponent("kill.bin")) == Data(content.bytes(0..<Self.size)))

            // Each byte about once: every kill may lose what `lossPerKill` allows, no more.
            let sent = file.bodyBytesSent
            let allowed = Self.size + Int64(Self.kills) * Self.lossPerKill
            #expect(sent <= allowed, """
                the server sent \(sent) bytes for \(Self.size) (x\(Double(sent) / Double(Self.size))), more than the \(allowed) allowed; \
                lost per kill: \(lost); the last run sent \(sent - sentBeforeFinal) for the \(Self.size - claimed.byteCount) missing
                """)
            // The kills kept more than the allowance: a download that started over at each run, and
            // so sent again all it had kept, would break the bound above.
            #expect(claimed.byteCount > Int64(Self.kills) * Self.lossPerKill, "the kills kept only \(claimed.byteCount) bytes")
        }
    }

    /// The resume record of `kill.bin` in `dir`: missing, valid, or invalid (with why).
    static func loadRecord(in dir: URL) -> ResumeRecord.LoadResult {
        guard let folder = try? DestinationFolder(path: dir.path) else { return .invalid("the folder cannot be opened") }
        return ResumeRecord.load(for: "kill.bin", in: folder)
    }
}

/// A route serving `size` bytes of `content(seed:)` with a strong ETag and single ranges
/// (`If-Range` compared with the ETag), paced per connection in 4 KiB writes, counting the
/// body bytes it writes.
///
/// `/bytes` and resources pace in writes of a twentieth of the rate (25 kB at 500 kB/s): a
/// killed client's socket still takes one such write per connection before the reset arrives,
/// up to 50 ms of transfer per kill (measured: +8% of the file over 20 kills). With 4 KiB
/// writes the count measures what the client asked for again, not the pacing.
final class FinelyPacedFile: Sendable {
    let size: Int64
    let content: DeterministicContent
    let etag: String
    private let rate: SharedStateLock<Int>
    private let sent = SharedStateLock<Int64>(0)

    init(size: Int64, seed: UInt64, etag: String, bytesPerSecond: Int) {
        self.size = size
        self.content = HaulServer.content(seed: seed)
        self.etag = etag
        self.rate = SharedStateLock(bytesPerSecond)
    }

    /// Paces the responses that start from now on at `bytesPerSecond` a connection.
    func pace(_ bytesPerSecond: Int) {
        rate.withLock { $0 = bytesPerSecond }
    }

    /// The body bytes written so far, over all connections.
    var bodyBytesSent: Int64 { sent.withLock { $0 } }

    func respond(to request: RecordedRequest, on connection: ServerConnection) throws {
        let answer = RangedAnswer(to: request, size: size, etag: etag)
        let range = answer.range
        try connection.write(answer.head)
        let chunk: Int64 = 4096
        let bytesPerSecond = rate.withLock { $0 }
        let start = ContinuousClock.now
        var offset = range.lowerBound
        while offset < range.upperBound {
            let next = min(range.upperBound, offset + chunk)
            try connection.write(content.bytes(offset..<next))
            sent.withLock { $0 += next - offset }
            offset = next
            let due = Double(offset - range.lowerBound) / Double(bytesPerSecond)
            let elapsed = start.duration(to: .now)
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
            if due > seconds { connection.sleep(seconds: due - seconds) }
        }
    }
}

/// A `haul` process that the test kills with SIGKILL.
final class KillableProcess: Sendable {
    private let process: Process
    private let exited: AsyncStream<Void>

    /// Starts `haul` with `arguments` in `directory`; its output is discarded.
    init(_ arguments: [String], in directory: URL) throws {
        let binary = try #require(HaulBinary.url, "the haul executable was not found; run `swift build` first or set HAUL_BINARY")
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        process.currentDirectoryURL = directory
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        let (stream, continuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        process.terminationHandler = { _ in
            continuation.yield()
            continuation.finish()
        }
        try process.run()
        self.process = process
        self.exited = stream
    }

    /// Sends SIGKILL (unless it already exited), waits for the exit and returns the status
    /// (`128 + signal` when a signal ended it).
    func sigkill() async -> Int32 {
        if process.isRunning { _ = kill(process.processIdentifier, SIGKILL) }
        for await _ in exited {}
        return process.terminationReason == .uncaughtSignal ? 128 + process.terminationStatus : process.terminationStatus
    }
}

