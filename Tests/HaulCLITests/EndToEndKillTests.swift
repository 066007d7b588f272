import Foundation
import Synchronization
import HaulServer
import HaulTestSupport
import Testing
@testable import Haul
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `kill -9` at any instant of a segmented download leaves a state that the same command,
/// run again, continues from: the resume record never claims a byte that is not on disk, the
/// final file is byte-identical, and the server sends each byte about once.
@Suite(.exclusive, .serialized, .timeLimit(.minutes(3)))
struct EndToEndKillTests {
    /// Above 16 MiB, so the connections write past the page cache where the folder allows it
    /// (see DirectStaging); 4 connections at 500 kB/s each: a full run takes about 9 s.
    static let size: Int64 = 17_000_000
    static let perConnectionRate = 500_000

    @Test func sigkillAtTwentyRandomMomentsThenRerunningFinishesByteIdentical() async throws {
        _ = try await Self.killTwentyTimesThenFinish()
    }

    @Test
    func sigkillAtTwentyRandomMomentsCostsLessThanATenthMore() async throws {
        let (sent, claimed) = try await Self.killTwentyTimesThenFinish()
        let ratio = Double(sent) / Double(Self.size)
        #expect(ratio < 1.1, "the server sent \(sent) bytes for \(Self.size) (x\(ratio)); records after each kill claimed \(claimed)")
    }

    /// Runs `haul -x 4` 20 times, each killed with SIGKILL after a random 0.1-0.6 s, checking the
    /// files after each kill, then once to its end, checking the result.
    ///
    /// - Returns: the body bytes the server sent in all, and what the record claimed after each kill.
    static func killTwentyTimesThenFinish() async throws -> (sent: Int64, claimed: [Int64]) {
        let server = try HaulServer()
        let content = HaulServer.content(seed: 11)
        let file = FinelyPacedFile(size: Self.size, seed: 11, etag: "\"k1\"", bytesPerSecond: Self.perConnectionRate)
        server.route("/kill.bin") { request, connection in try file.respond(to: request, on: connection) }
        return try await withTemporaryDirectory { (dir) async throws -> (sent: Int64, claimed: [Int64]) in
            let arguments = ["-q", "-x", "4", "-d", dir.path, server.url("/kill.bin")]
            var random = SplitMix64(seed: 0x5EED_2026)
            var killed = 0
            var claimed: [Int64] = []
            for round in 0..<20 {
                let process = try KillableProcess(arguments, in: dir)
                let delay = 0.1 + 0.5 * random.nextUnitDouble()
                try await Task.sleep(for: .milliseconds(Int(delay * 1000)))
                let status = await process.sigkill()
                if status == 128 + SIGKILL { killed += 1 } else {
                    Issue.record("round \(round): haul ended with \(status) before the kill")
                }
                // Whatever the kill interrupted, the record (if any) claims only bytes that are there.
                let files = listFiles(dir)
                #expect(files.allSatisfy { ["kill.bin.part", "kill.bin.resume", "kill.bin.rtmp"].contains($0) }, "round \(round): \(files)")
                // Saved as temporary + rename, the record on disk is always a whole one.
                let loaded = Self.loadRecord(in: dir)
                if case .invalid(let why) = loaded { Issue.record("round \(round): \(why)") }
                if case .valid(let record) = loaded {
                    #expect(record.totalLength == Self.size)
                    claimed.append(record.completed.byteCount)
                    let partial = try Data(contentsOf: dir.appendingPathComponent("kill.bin.part"))
                    for range in record.completed.ranges {
                        let onDisk = partial.count >= Int(range.upperBound) ? [UInt8](partial[Int(range.lowerBound)..<Int(range.upperBound)]) : []
                        #expect(onDisk == content.bytes(range), "round \(round): the record claims \(range), which is not on disk")
                    }
                }
            }
            #expect(killed == 20)
            #expect(claimed.last ?? 0 > 0, "no kill left anything to resume: \(claimed)")

            let final = try await haul(arguments, in: dir, timeout: .seconds(60))
            #expect(final.status == 0, "\(final.standardError)")
            #expect(listFiles(dir) == ["kill.bin"])
            #expect(fileContents(dir.appendingPathComponent("kill.bin")) == Data(content.bytes(0..<Self.size)))
            return (file.bodyBytesSent, claimed)
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
    let bytesPerSecond: Int
    private let sent = Mutex<Int64>(0)

    init(size: Int64, seed: UInt64, etag: String, bytesPerSecond: Int) {
        self.size = size
        self.content = HaulServer.content(seed: seed)
        self.etag = etag
        self.bytesPerSecond = bytesPerSecond
    }

    /// The body bytes written so far, over all connections.
    var bodyBytesSent: Int64 { sent.withLock { $0 } }

    func respond(to request: RecordedRequest, on connection: ServerConnection) throws {
        let answer = RangedAnswer(to: request, size: size, etag: etag)
        let range = answer.range
        try connection.write(answer.head)
        let chunk: Int64 = 4096
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

