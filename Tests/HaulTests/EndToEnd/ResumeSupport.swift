import Foundation
import HaulServer
import HaulTestSupport
import Testing
@testable import Haul
import HaulCore

/// What one run of a download reported: its events, in order, and how it ended.
struct RunOutcome {
    var events: [DownloadEvent]
    var error: DownloadError?

    /// The facts of the `.started` event, if there was one.
    var started: DownloadStart? {
        events.lazy.compactMap { if case .started(let start) = $0 { start } else { nil } }.first
    }

    /// The reasons of every `.startingOver` event.
    var startingOver: [String] {
        events.compactMap { if case .startingOver(let reason) = $0 { reason } else { nil } }
    }

    /// Whether the run ended with `.finished`.
    var finished: Bool {
        if case .finished? = events.last { true } else { false }
    }

    /// The names of the events, consecutive progress events collapsed.
    var names: [String] {
        var names: [String] = []
        for event in events {
            let name: String = switch event {
            case .started: "started"
            case .progress: "progress"
            case .retrying: "retrying"
            case .paused: "paused"
            case .resumed: "resumed"
            case .startingOver: "startingOver"
            case .warning: "warning"
            case .skipped: "skipped"
            case .finished: "finished"
            }
            if name != "progress" || names.last != "progress" { names.append(name) }
        }
        return names
    }
}

/// Runs `download` to its end, collecting its events. `onEvent` may act on the download
/// (cancel, pause, resume) as events arrive.
func collect(_ download: Download, onEvent: (DownloadEvent) async -> Void = { _ in }) async -> RunOutcome {
    var outcome = RunOutcome(events: [])
    do throws(DownloadError) {
        for try await event in download.events {
            outcome.events.append(event)
            await onEvent(event)
        }
    } catch {
        outcome.error = error
    }
    return outcome
}

/// Starts `request` and cancels it once at least `bytes` bytes of it are on disk (a progress
/// event says so); records an issue unless it ends `cancelled`.
func interrupted(_ downloader: Downloader, _ request: DownloadRequest, to destination: Destination, after bytes: Int64,
                 sourceLocation: SourceLocation = #_sourceLocation) async -> RunOutcome {
    let download = downloader.download(request, to: destination)
    let outcome = await collect(download) { event in
        if case .progress(let progress) = event, progress.completedBytes >= bytes { download.cancel() }
    }
    #expect(outcome.error?.code == .cancelled, "the first run should end cancelled: \(outcome.error?.description ?? "finished")",
            sourceLocation: sourceLocation)
    return outcome
}

/// Runs `request` to its end.
func runToEnd(_ downloader: Downloader, _ request: DownloadRequest, to destination: Destination) async -> RunOutcome {
    await collect(downloader.download(request, to: destination))
}

/// A downloader for resume tests: short timeouts, quick retries, the given connections.
func resumeDownloader(connections: Int = 1, _ adjust: (inout Downloader.Configuration) -> Void = { _ in }) -> Downloader {
    testDownloader { configuration in
        configuration.connectionsPerDownload = connections
        configuration.retry = RetryPolicy(maximumRetries: 3, initialDelay: .milliseconds(50), maximumDelay: .milliseconds(200))
        configuration.resumeRecordInterval = .milliseconds(100)
        adjust(&configuration)
    }
}

/// The resume record `NAME.resume` in `dir`, when there is a valid one.
func loadResumeRecord(_ name: String, in dir: URL) -> ResumeRecord? {
    guard let folder = try? DestinationFolder(path: dir.path),
          case .valid(let record) = ResumeRecord.load(for: name, in: folder) else { return nil }
    return record
}

/// The first byte a resume asks for: the start of the first gap of the record.
func firstMissingByte(_ record: ResumeRecord) -> Int64 {
    record.completed.gaps(within: 0..<record.totalLength).first?.lowerBound ?? record.totalLength
}

/// A ranged request's `Range: bytes=a-b` (or `bytes=a-`) as `(a, b)`; `nil` for anything else.
func requestedRange(_ request: RecordedRequest) -> (first: Int64, last: Int64?)? {
    guard let value = request.header("Range"), value.hasPrefix("bytes=") else { return nil }
    let parts = value.dropFirst(6).split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
    guard parts.count == 2, let first = Int64(parts[0]) else { return nil }
    if parts[1].isEmpty { return (first, nil) }
    guard let last = Int64(parts[1]) else { return nil }
    return (first, last)
}

/// The size of the file at `url` (0 when missing).
func fileSize(_ url: URL) -> Int64 {
    ((try? FileManager.default.attributesOfItem(atPath: url.path))?[.size] as? NSNumber)?.int64Value ?? 0
}

/// The requests `server` received after the first `count`.
func requests(of server: HaulServer, after count: Int) -> [RecordedRequest] {
    Array(server.requests.dropFirst(count))
}

/// A strong ETag, a Last-Modified date, or both: how the server lets a resume check the file.
enum Validators: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case etag, lastModified

    static let date = "Tue, 01 Dec 2026 10:00:00 GMT"

    /// A resource of `size` bytes with these validators.
    func resource(size: Int64, seed: UInt64 = 1, rate: Int? = 0, etag: String = "\"v1\"") -> HaulServer.Resource {
        switch self {
        case .etag: HaulServer.Resource(size: size, seed: seed, etag: etag, rate: rate)
        case .lastModified: HaulServer.Resource(size: size, seed: seed, lastModified: Self.date, rate: rate)
        }
    }

    /// The `If-Range` value a resume sends.
    var ifRange: String {
        switch self {
        case .etag: "\"v1\""
        case .lastModified: Self.date
        }
    }

    var testDescription: String { rawValue }
}

/// The bytes of `range` of the file at `url`.
func fileBytes(_ url: URL, _ range: Range<Int64>) throws -> [UInt8] {
    let handle = try FileHandle(forReadingFrom: url)
    defer { try? handle.close() }
    try handle.seek(toOffset: UInt64(range.lowerBound))
    return [UInt8](try handle.read(upToCount: Int(range.count)) ?? Data())
}

/// Checks that every byte the record of `name` claims is on disk in `NAME.part` and equal to
/// `resource`'s byte there (a record never claims bytes that are not on disk).
func expectRecordClaimsOnlyWrittenBytes(_ record: ResumeRecord, name: String, in dir: URL, resource: HaulServer.Resource,
                                        sourceLocation: SourceLocation = #_sourceLocation) throws {
    let partial = dir.appendingPathComponent(name + ".part")
    for range in record.completed.ranges {
        #expect(try fileBytes(partial, range) == resource.bytes(range),
                "the record claims \(range) but the partial holds other bytes there", sourceLocation: sourceLocation)
    }
}

/// Serves `resource` at `/file.bin`, starts a download of it with `downloader` into `dir`
/// and cancels it once `bytes` bytes are on disk.
///
/// - Returns: the valid resume record the interrupted run left.
func interruptFirstRun(_ server: HaulServer, _ resource: HaulServer.Resource, _ downloader: Downloader, in dir: URL,
                       after bytes: Int64, path: String = "/file.bin",
                       sourceLocation: SourceLocation = #_sourceLocation) async throws -> ResumeRecord {
    server.setResource("/file.bin", resource)
    _ = await interrupted(downloader, DownloadRequest(url: url(server, path)), to: .directory(dir), after: bytes,
                          sourceLocation: sourceLocation)
    #expect(listFiles(dir) == ["file.bin.part", "file.bin.resume"], sourceLocation: sourceLocation)
    #expect(await waitForIdle(server), "the server still serves the first run", sourceLocation: sourceLocation)
    let record = try #require(loadResumeRecord("file.bin", in: dir), "no valid resume record", sourceLocation: sourceLocation)
    #expect(record.completed.byteCount >= bytes, sourceLocation: sourceLocation)
    try #require(firstMissingByte(record) < resource.size, "the first run got every byte before the cancel took effect",
                 sourceLocation: sourceLocation)
    #expect(record.totalLength == resource.size, sourceLocation: sourceLocation)
    try expectRecordClaimsOnlyWrittenBytes(record, name: "file.bin", in: dir, resource: resource, sourceLocation: sourceLocation)
    return record
}

/// Waits (at most `timeout`) until `server` has no open connection, so that its counters
/// (`bodyBytesSent`, `requests`) no longer move; returns whether it became idle.
func waitForIdle(_ server: HaulServer, timeout: Duration = .seconds(10)) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    while server.openConnectionCount > 0 {
        if ContinuousClock.now > deadline { return false }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return true
}

/// Events collected while a download runs, readable at any moment.
final class EventLog: Sendable {
    private let events = SharedStateLock<[DownloadEvent]>([])

    func append(_ event: DownloadEvent) { events.withLock { $0.append(event) } }

    /// The events so far.
    var all: [DownloadEvent] { events.withLock { $0 } }

    /// Whether an event matching `predicate` arrived.
    func contains(_ predicate: (DownloadEvent) -> Bool) -> Bool { events.withLock { $0.contains(where: predicate) } }
}
