#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import HaulCore
import HaulHTTP

/// One try at a download, from looking at the disk to the file ready for its commit:
///
/// 1. what is on disk under the name the download would have (a partial file and its record);
/// 2. one request for the rest, or for everything from byte 0 (to learn about ranges);
/// 3. the plan: resume, start over, done already, or a name and a partial file to write
///    (``DownloadAttempt+Plan``);
/// 4. the bytes moved and checked (``DownloadAttempt+Write``).
///
/// A class: the attempt is handed to the helpers of each step and captured by their closures,
/// and as a value (a job, a source, a target and the downloader's configuration) each of those
/// copied and destroyed it whole.
final class DownloadAttempt {
    let job: DownloadJob
    /// The request's URL first, then its mirrors.
    let sources: [SignedSource]
    let target: DownloadTarget
    let context: HTTPExchange.Context
    let buffer: UnsafeMutableRawBufferPointer
    let signal: CancellationSignal
    /// The rate limit of this attempt (the download's own, else the downloader's while it has
    /// one), fixed when the attempt starts.
    let limiter: RateLimiter?
    /// The source of the first response (an index into ``sources``).
    private(set) var firstSource = 0
    /// How each source before ``firstSource`` failed the first request.
    private(set) var setAsideFirst: [DownloadError] = []

    init(job: DownloadJob, sources: [SignedSource], target: DownloadTarget, context: HTTPExchange.Context,
         buffer: UnsafeMutableRawBufferPointer, signal: CancellationSignal, limiter: RateLimiter?) {
        self.job = job
        self.sources = sources
        self.target = target
        self.context = context
        self.buffer = buffer
        self.signal = signal
        self.limiter = limiter
    }

    var configuration: Downloader.Configuration { job.configuration }
    /// The request's URL: it names the file and keys its resume record, whichever source answers.
    var url: HTTPURL { sources[0].base }
    var events: EventQueue { job.events }
    var folder: DestinationFolder { target.folder }
    var policy: ConflictPolicy { job.request.conflictPolicy ?? configuration.conflictPolicy }

    func run(startFresh: Bool) throws(DownloadError) -> DownloadJob.Ending {
        // Made once: it is a SHA-256. With mirrors, the file's, whichever server comes first.
        let resourceKey = sources.count == 1 ? ResumeRecord.resourceKey(for: url)
            : ResumeRecord.resourceKey(for: sources.map(\.base), checksum: job.request.checksum, pieces: job.request.pieces)
        let predicted = target.fixedName ?? FileNamer.name(contentDisposition: nil, originalURLPath: url.path, contentType: nil)
        var found = try findPartial(named: predicted, startFresh: startFresh, resourceKey: resourceKey)
        defer { found.partial?.closeKeeping() }
        let (exchange, slot) = try firstResponse(found: found)
        defer { slot.release() }
        let plan: Plan
        do throws(DownloadError) {
            plan = try self.plan(for: exchange, found: &found, predicted: predicted, resourceKey: resourceKey)
        } catch {
            exchange.close()
            throw error
        }
        switch plan {
        case .done(let ending):
            exchange.close()
            return ending
        case .write(let file):
            return .commit(try write(file, from: exchange, slot: slot))
        }
    }

    /// The validator a resumed request sends in `If-Range`: the record's, unless every piece is
    /// checked against its checksum (the file is then named by its content, and mirrors have
    /// validators of their own: see ``ResumeDecision/decide(record:requestedStart:facts:checksByContent:)``).
    func resumeValidator(_ record: ResumeRecord?) -> String? {
        job.request.pieces != nil ? nil : record.flatMap { $0.etag ?? $0.lastModified }
    }

    /// The first response: from the request's URL, or, when that source fails (a refusal, a
    /// status, a bad answer), from each mirror in turn; the first failure is thrown when every
    /// source failed. The first connection counts against its host's cap like every segment's.
    private func firstResponse(found: FoundPartial) throws(DownloadError) -> (HTTPExchange, HostSlotClaim) {
        var firstFailure: DownloadError?
        for (index, source) in sources.enumerated() {
            let slot = try HostSlotClaim(job.resources.hostSlots, for: source.base, cancellation: signal)
            do throws(DownloadError) {
                let exchange = try source.open(range: ByteRangeRequest(first: found.record.map(Self.firstMissingByte) ?? 0, last: nil),
                                               ifRange: index == 0 ? resumeValidator(found.record) : nil,
                                               context: context, cancellation: signal, buffer: buffer)
                if sources.count > 1 { try Self.check(exchange) }
                firstSource = index
                return (exchange, slot)
            } catch {
                slot.release()
                guard index + 1 < sources.count, (4...8).contains(error.code.exitStatus), !signal.isCancelled else {
                    throw firstFailure ?? error
                }
                firstFailure = firstFailure ?? error
                setAsideFirst.append(error)
                events.yield(.warning("source \(index + 1) (\(source.base)) set aside: \(error.message)"))
            }
        }
        throw firstFailure ?? DownloadError(.internalError, "the download has no source")
    }

    /// An error status from one of several sources fails that source (closing its response).
    private static func check(_ exchange: HTTPExchange) throws(DownloadError) {
        do throws(DownloadError) {
            try DownloadJob.validate(exchange.head, askedForRange: true)
        } catch {
            exchange.close()
            throw error
        }
    }

    static func firstMissingByte(_ record: ResumeRecord) -> Int64 {
        record.completed.gaps(within: 0..<record.totalLength).first?.lowerBound ?? record.totalLength
    }

    /// What a finished file is marked with (``FinishedFileMark``); `nil` without a validator, and
    /// for a URL with a query without a strong ETag: the resource key leaves the query out (so that
    /// a re-signed URL still matches), and `get?id=1` and `get?id=2` may well share a length and a
    /// `Last-Modified`.
    static func identity(_ resourceKey: String, _ length: Int64, _ etag: String?,
                         _ lastModified: String?, url: HTTPURL) -> FinishedFileMark.Identity? {
        if url.query != nil && etag == nil { return nil }
        return FinishedFileMark.Identity(resourceKey: resourceKey, length: length, etag: etag, lastModified: lastModified)
    }
}

// MARK: - What is on disk

extension DownloadAttempt {
    /// A partial file found under the predicted name, locked, and the record that lets it resume.
    struct FoundPartial {
        /// Closed (kept on disk) by the attempt unless the plan takes it.
        var partial: PartialFile?
        var record: ResumeRecord?
        var pieces = BlockHashes()
    }

    /// What is on disk under `name`, before any network I/O: the partial file, locked, and its
    /// record when it can be trusted for this URL (bytes changed since are downloaded again).
    func findPartial(named name: String, startFresh: Bool, resourceKey: String) throws(DownloadError) -> FoundPartial {
        var found = FoundPartial(partial: try partialToResume(named: name))
        guard let partial = found.partial else { return found }
        if startFresh {
            ResumeRecord.remove(for: name, in: folder)
            return found
        }
        switch usableRecord(for: name, partial: partial, resourceKey: resourceKey) {
        case .usable(let usable):
            let checked = BlockHashes.verify(usable, descriptor: partial.descriptor)
            (found.record, found.pieces) = (checked.record, checked.hashes)
            if checked.dropped > 0 {
                events.yield(.warning("\(checked.dropped) bytes of the partial file no longer match their hashes; downloading them again"))
            }
        case .rejected(let reason):
            events.yield(.startingOver(reason: reason))
        }
        return found
    }

    /// The partial file this download would continue, locked; `nil` when there is none, or when a
    /// running download of this downloader holds that name (another URL that happens to share the
    /// name: this one then picks its own name, `name.1.ext`, once the server answered).
    private func partialToResume(named name: String) throws(DownloadError) -> PartialFile? {
        // An exact destination (`-o`) cannot move aside: a running download of it is a lock.
        let canMoveAside = target.fixedName == nil
        let reservations = job.resources.folders.reservations
        if canMoveAside, reservations.isReserved(name, in: folder) { return nil }
        do throws(DownloadError) {
            return try PartialFile.openExisting(name + PartialFile.suffix, in: folder)
        } catch {
            if canMoveAside, error.code == .locked, reservations.isReserved(name, in: folder) { return nil }
            throw error
        }
    }

    /// The record of `name` if it can be trusted for this URL and this partial file, else why not.
    private enum RecordCheck { case usable(ResumeRecord), rejected(String) }

    private func usableRecord(for name: String, partial: PartialFile, resourceKey: String) -> RecordCheck {
        let shown = "'\(folder.path)/\(name)\(PartialFile.suffix)'"
        switch ResumeRecord.load(for: name, in: folder) {
        case .missing:
            return .rejected("\(shown) has no resume record, so its bytes cannot be trusted; starting over")
        case .invalid(let why):
            return .rejected("the resume record of \(shown) is unusable (\(why)); starting over")
        case .valid(let record):
            if record.resourceKey != resourceKey {
                return .rejected("\(shown) belongs to another URL; starting over")
            }
            if record.etag == nil && record.lastModified == nil {
                return .rejected("\(shown) has no validator to check the server's file against; starting over")
            }
            let claimed = record.completed.ranges.last?.upperBound ?? 0
            let length = partial.length
            if length < claimed || length > record.totalLength {
                return .rejected("\(shown) does not have the length its resume record expects; starting over")
            }
            return .usable(record)
        }
    }
}
