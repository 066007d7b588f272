#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One try at a download, from looking at the disk to the final rename.
struct DownloadAttempt {
    let job: DownloadJob
    let source: SignedSource
    let target: DownloadTarget
    let tls: TLSContextCache
    let buffer: UnsafeMutableRawBufferPointer
    let signal: CancellationSignal

    var configuration: Downloader.Configuration { job.configuration }
    var url: HTTPURL { source.base }
    var events: EventQueue { job.events }
    var folder: DestinationFolder { target.folder }

    func run(startFresh: Bool) throws(DownloadError) -> DownloadJob.Ending {
        let resourceKey = ResumeRecord.resourceKey(for: url)   // made once: it is a SHA-256
        // 1. What is on disk, under the name this download would have (before any network I/O).
        let predicted = target.fixedName ?? FileNamer.name(contentDisposition: nil, originalURLPath: url.path, contentType: nil)
        var existing = try partialToResume(named: predicted)
        var record: ResumeRecord?
        var blocks = BlockHashes()
        if let partial = existing {
            if startFresh {
                ResumeRecord.remove(for: predicted, in: folder)
            } else {
                switch usableRecord(for: predicted, partial: partial, resourceKey: resourceKey) {
                case .usable(let usable):
                    // Bytes changed on disk since the record was written are downloaded again.
                    let checked = BlockHashes.verify(usable, descriptor: partial.descriptor)
                    (record, blocks) = (checked.record, checked.hashes)
                    if checked.dropped > 0 {
                        events.yield(.warning("\(checked.dropped) bytes of the partial file no longer match their hashes; downloading them again"))
                    }
                case .rejected(let reason): events.yield(.startingOver(reason: reason))
                }
            }
        }
        defer { existing?.closeKeeping() }

        // 2. Ask for the rest (or for everything, from byte 0, to learn about ranges).
        let requestedStart = record.map(Self.firstMissingByte) ?? 0
        let validator = record.flatMap { $0.etag ?? $0.lastModified }
        // The first connection counts against the host's cap like every segment's; its slot goes
        // back when the connection is done with (a transfer's first worker gives it back).
        let slots = job.resources.hostSlots
        if let slots, !slots.acquire(for: url, cancellation: signal) { throw DownloadError(.cancelled, "cancelled") }
        var holdsSlot = slots != nil
        defer { if holdsSlot { slots?.release(for: url) } }
        let exchange = try source.open(range: ByteRangeRequest(first: requestedStart, last: nil), ifRange: validator,
                                       configuration: configuration, tls: tls, pool: job.resources.pool,
                                       cancellation: signal, buffer: buffer)
        var handedOver = false
        defer { if !handedOver { exchange.close() } }
        try DownloadJob.validate(exchange.head, askedForRange: true)
        let facts = ResumeDecision.ResponseFacts(exchange.head, framing: exchange.framing)
        let verification = Verification(request: job.request, head: exchange.head, record: record)
        switch try ResumeDecision.decide(record: record, requestedStart: requestedStart, facts: facts) {
        case .restartFresh(let reason):
            throw DownloadError(.resourceChanged, reason)
        case .alreadyComplete:
            guard let partial = existing, let record else { throw DownloadError(.internalError, "complete without a partial") }
            existing = nil
            do throws(DownloadError) {
                return .commit(try finish(partial, name: predicted, fileURL: target.fileURL(predicted), ownsName: false,
                                          byteCount: record.totalLength,
                                          head: exchange.head, replaceAllowed: target.fixedName != nil,
                                          verification: verification, hasher: nil,
                                          mark: Self.identity(record.resourceKey, record.totalLength, record.etag,   // a 416 may have no validators
                                                              record.lastModified, url: url)))
            } catch {
                if error.code == .checksumMismatch {
                    ResumeRecord.remove(for: predicted, in: folder)
                    partial.discard()
                }
                throw error
            }
        case .startOver(let reason):
            events.yield(.startingOver(reason: reason))
            record = nil
            blocks = BlockHashes()
        case .resume, .emptyFile:
            break
        }

        // 3. The name and the partial file.
        let name: String
        let partial: PartialFile
        let policy = job.request.conflictPolicy ?? configuration.conflictPolicy
        if record != nil, let resumed = existing {
            name = predicted
            partial = resumed
            existing = nil
            guard FileReservations.shared.reserve(name, in: folder) else {
                throw DownloadError(.locked, "another download is writing '\(folder.path)/\(name)'")
            }
        } else {
            var finishedSHA256: String?
            var identityMade: FinishedFileMark.Identity??   // made once, and only if a name is taken
            let finished = { (name: String) -> Bool in
                // A file this URL's download finished in an earlier run (a rerun after an interruption).
                // Not when the caller asked to start over (`startFresh` is only the first attempt's),
                // nor when the policy says to replace or keep whatever exists.
                guard !job.request.startOver, policy != .overwrite, policy != .skip || target.fixedName != nil,
                      let total = facts.totalLength else { return false }
                if identityMade == nil {
                    identityMade = .some(Self.identity(resourceKey, total, facts.strongETag, facts.lastModified, url: url))
                }
                guard let identity = identityMade ?? nil else { return false }
                return FinishedFileMark.isFinished(name, in: folder, as: identity) { descriptor in
                    guard let verification else { return true }
                    let digests = try? StreamHasher(algorithms: verification.algorithms, descriptor: descriptor)
                        .finish(length: total, stop: { signal.isCancelled })
                    finishedSHA256 = digests.flatMap { try? verification.check($0) }
                    return finishedSHA256 != nil
                }
            }
            switch try target.choose(response: exchange.head, originalURL: url, urlName: predicted, policy: policy,
                                     finished: finished) {
            case .skip(let taken):
                return .done(DownloadResult(response: exchange.head, fileURL: target.fileURL(taken), byteCount: 0, skipped: true))
            case .finished(let done):
                if done == predicted, let stale = existing {   // its record was rejected: nothing resumes it
                    existing = nil
                    ResumeRecord.remove(for: predicted, in: folder)
                    stale.discard()
                }
                return .done(DownloadResult(response: exchange.head, fileURL: target.fileURL(done), byteCount: facts.totalLength ?? 0,
                                            skipped: false, sha256: finishedSHA256, alreadyComplete: true))
            case .write(let chosen, _):
                name = chosen
            }
            // A cancellation may have cut short the check of a finished file (its checksum): then
            // it was not recognised, and nothing is written.
            if signal.isCancelled {
                target.release(name)
                throw DownloadError(.cancelled, "cancelled")
            }
            if name == predicted, let reused = existing {
                try reused.truncate(to: 0)
                partial = reused
                existing = nil
                ResumeRecord.remove(for: name, in: folder)   // the old record must not outlive its bytes
            } else {
                do throws(DownloadError) {
                    partial = try PartialFile.createEmpty(name + PartialFile.suffix, in: folder)
                } catch {
                    target.release(name)
                    throw error
                }
                // A record without its partial file is never read (records are only looked at beside
                // a partial), and the first checkpoint replaces it: no lookup needed here.
            }
        }
        var ownsName = true   // until the commit owns the reservation
        defer { if ownsName { target.release(name) } }
        let fileURL = target.fileURL(name)

        // 4. Move the bytes.
        do throws(DownloadError) {
            var recordWritten = record != nil
            let hasher = verification.map { StreamHasher(algorithms: $0.algorithms, descriptor: partial.descriptor) }
            defer { hasher?.stop() }   // before the partial file closes
            let written = try transfer(exchange: exchange, facts: facts, record: record, resourceKey: resourceKey,
                                       name: name, fileURL: fileURL, partial: partial, integrity: (verification, hasher, blocks),
                                       handedOver: &handedOver, holdsSlot: &holdsSlot, recordWritten: &recordWritten)
            let replace = target.fixedName != nil || policy == .overwrite
            // The validators of this response, as a rerun's check will see them.
            let marked = (record?.totalLength ?? facts.totalLength).flatMap { total in
                Self.identity(resourceKey, total, facts.strongETag, facts.lastModified, url: url)
            }
            let commit = try finish(partial, name: name, fileURL: fileURL, ownsName: true, byteCount: written, head: exchange.head,
                                    replaceAllowed: replace, recordMayExist: recordWritten, verification: verification,
                                    hasher: hasher, mark: marked)
            ownsName = false
            return .commit(commit)
        } catch {
            // Bytes that arrived intact before a network failure, a full disk, a pause or a
            // cancellation stay for a resume; after a protocol or integrity failure they cannot be trusted.
            if error.code == .cancelled || error.code == .diskFull || error.code.exitStatus == 4 || signal.isCancelled
                || error.code == .destinationExists {
                partial.closeKeeping()
            } else {
                ResumeRecord.remove(for: name, in: folder)
                partial.discard()
            }
            throw error
        }
    }

    /// The partial file this download would continue, locked; `nil` when there is none, or when a
    /// running download of this process holds that name (another URL that happens to share the
    /// name: this one then picks its own name, `name.1.ext`, once the server answered).
    private func partialToResume(named name: String) throws(DownloadError) -> PartialFile? {
        // An exact destination (`-o`) cannot move aside: a running download of it is a lock.
        let canMoveAside = target.fixedName == nil
        if canMoveAside, FileReservations.shared.isReserved(name, in: folder) { return nil }
        do throws(DownloadError) {
            return try PartialFile.openExisting(name + PartialFile.suffix, in: folder)
        } catch {
            if canMoveAside, error.code == .locked, FileReservations.shared.isReserved(name, in: folder) { return nil }
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

    /// What a finished file is marked with (``FinishedFileMark``); `nil` without a validator, and
    /// for a URL with a query without a strong ETag: the resource key leaves the query out (so that
    /// a re-signed URL still matches), and `get?id=1` and `get?id=2` may well share a length and a
    /// `Last-Modified`.
    private static func identity(_ resourceKey: String, _ length: Int64, _ etag: String?,
                                 _ lastModified: String?, url: HTTPURL) -> FinishedFileMark.Identity? {
        if url.query != nil && etag == nil { return nil }
        return FinishedFileMark.Identity(resourceKey: resourceKey, length: length, etag: etag, lastModified: lastModified)
    }

    private static func firstMissingByte(_ record: ResumeRecord) -> Int64 {
        record.completed.gaps(within: 0..<record.totalLength).first?.lowerBound ?? record.totalLength
    }

    /// Streams the response (and, for a ranged file, the other segments) into `partial`.
    private func transfer(exchange: HTTPExchange, facts: ResumeDecision.ResponseFacts, record: ResumeRecord?,
                          resourceKey: String, name: String, fileURL: URL, partial: PartialFile,
                          integrity: (Verification?, StreamHasher?, BlockHashes),
                          handedOver: inout Bool, holdsSlot: inout Bool,
                          recordWritten: inout Bool) throws(DownloadError) -> Int64 {
        let (verification, hasher, blocks) = integrity
        if facts.status == 416 {   // an empty file (ResumeDecision.emptyFile): nothing to read
            try partial.truncate(to: 0)
            events.yield(.started(DownloadStart(redactedURL: url.description, fileURL: fileURL, totalBytes: 0,
                                                resumedFrom: 0, connections: 1, response: exchange.head)))
            events.yield(.progress(DownloadProgress(completedBytes: 0, totalBytes: 0, bytesPerSecond: 0, estimatedTimeRemaining: 0)))
            return 0
        }
        let total = record?.totalLength ?? facts.totalLength
        let validator = record.flatMap { $0.etag ?? $0.lastModified } ?? facts.strongETag ?? facts.lastModified
        let resumable = total != nil && facts.acceptsRanges && validator != nil

        // The redacted texts, made once (each is a parse of the URL's query).
        let shownURL = url.description
        // A body that came whole with its head (a small file on a fast link) waits for nothing:
        // it is written straight from the receive buffer, with no resume record to keep, so no
        // checkpoints, block hashes or segment plan. Only a body of the file's whole length: a
        // 206 that holds less (a server that caps its ranges) goes on with the segments' path,
        // which asks for the rest. Under a rate limit the segments' path keeps its checkpoints,
        // since the limiter may hold the bytes back for a while. A pause or cancel that comes
        // while such a body is written lets the download end (as one during the commit does).
        let wholeBodyHere: Bool
        if record == nil, job.resources.limiter == nil, exchange.bodyIsBuffered, let total,
           case .length(let length)? = exchange.framing, length == total {
            wholeBodyHere = true
        } else {
            wholeBodyHere = false
        }
        // A full disk is reported before the transfer; a body already here has no transfer left
        // to spare, and its one write reports a full disk just the same (`diskFull`).
        if let total, !wholeBodyHere { try partial.ensureSpace(for: total) }
        var newRecord: ResumeRecord?
        if resumable, !wholeBodyHere, let total {
            let shownFinalURL = exchange.finalURL == url ? shownURL : exchange.finalURL.description
            var fresh = record ?? ResumeRecord(url: url, finalURL: exchange.finalURL, etagHeader: facts.strongETag,
                                               lastModified: facts.lastModified, totalLength: total,
                                               shownURL: shownURL, shownFinalURL: shownFinalURL, resourceKey: resourceKey)
            fresh.redactedFinalURL = shownFinalURL
            fresh.serverDigest = verification?.serverDigest?.description
            // The record is first written at the first checkpoint: a download that ends sooner
            // (most small files) never pays for it, and a crash before it just starts over.
            newRecord = fresh
        }
        let resumedFrom = record?.completed.byteCount ?? 0
        let progress = ProgressReporter(events: events, interval: configuration.progressInterval)
        func started(connections: Int) {
            events.yield(.started(DownloadStart(redactedURL: shownURL, fileURL: fileURL, totalBytes: total,
                                                resumedFrom: resumedFrom, connections: connections, response: exchange.head)))
            progress.start(total: total, alreadyComplete: resumedFrom, ticks: !wholeBodyHere)
        }
        defer { progress.finish() }

        if let total, let template = newRecord {
            let folder = self.folder
            // Whole blocks go past the page cache (see SegmentedTransfer) unless a rate limit
            // meters the bytes as they arrive. Such a file gets its blocks reserved first: direct
            // writes into a file that grows took 2.0 s for 2 GiB, into reserved blocks 1.5 s.
            // (With the page cache, writes into reserved blocks cost more CPU time.) Files the
            // BatchCommitter may take (16 MiB or less) keep the page cache: their sync is shared.
            // Segments of 64 KiB at least: smaller ones would be mostly edges, which go through
            // the page cache anyway. With a checksum, only over several connections (its hasher
            // then reads past the cache too): one connection's bytes arrive in order, written
            // through the cache they are hashed by an idle follower as they come (1 GiB: the
            // checksum cost nothing against 0.2-0.6 s past the cache, where a follower that
            // falls behind holds the connection up).
            let writesDirect = total > BatchCommitter.largestFile && job.resources.limiter == nil
                && (hasher == nil || configuration.connectionsPerDownload > 1)
                && configuration.minimumSegmentSize >= 64 << 10 && partial.directDescriptor() != nil
            if writesDirect {
                try partial.reserve(length: total)
                if let direct = partial.directDescriptor() { hasher?.readPastCache(direct) }
            }
            let setup = SegmentedTransfer.Setup(
                url: url, userHeaders: job.request.headers, configuration: configuration, tls: tls, partial: partial,
                progress: progress, total: total, ifRange: validator, limiter: job.resources.limiter,
                hostSlots: job.resources.hostSlots, pool: job.resources.pool,
                checkpoint: { (completed, pieces, savedBefore) throws(DownloadError) in
                    var record = template
                    record.completed = ByteRangeSet(completed)
                    record.blockHashes = pieces
                    try record.save(for: name, in: folder, fieldsChecked: savedBefore)
                }, source: source, hasher: hasher, blocks: blocks, writesDirect: writesDirect)
            let transfer = SegmentedTransfer(setup: setup, completed: template.completed.ranges,
                                             connections: configuration.connectionsPerDownload)
            started(connections: transfer.plannedConnections)
            handedOver = true
            let slotGoesWithIt = holdsSlot
            holdsSlot = false
            defer { recordWritten = recordWritten || transfer.checkpointed }
            try transfer.run(first: exchange, firstBuffer: buffer, run: signal, firstHoldsHostSlot: slotGoesWithIt)
            return total
        }
        started(connections: 1)
        let written = try stream(exchange, into: partial, total: total, progress: progress, hasher: hasher)
        handedOver = true
        exchange.finish(pool: job.resources.pool)
        if holdsSlot {
            job.resources.hostSlots?.release(for: url)
            holdsSlot = false
        }
        return written
    }

    /// One connection from byte 0 to the end: an unknown length, a server without ranges, or a
    /// body that arrived whole with its head.
    private func stream(_ exchange: HTTPExchange, into partial: PartialFile, total: Int64?,
                        progress: ProgressReporter, hasher: StreamHasher?) throws(DownloadError) -> Int64 {
        let limiter = job.resources.limiter
        if let limiter { exchange.limitReads(to: limiter.readSize) }
        let signal = self.signal
        var written: Int64 = 0
        // Writeback starts every 16 MiB; the rest is left to the commit's sync (a small file's
        // writeback started here, file by file, cost more system time than the batch's one sync).
        var tracker = WritebackTracker()
        try exchange.readBody(stallTimeout: configuration.stallTimeout) { (slice) throws(DownloadError) -> Bool in
            try partial.write(slice, at: written)
            hasher?.offer(slice, at: written)
            tracker.wrote(slice.count, at: written, to: partial)
            written += Int64(slice.count)
            progress.add(slice.count)
            if let limiter, !limiter.consume(slice.count, sleep: { signal.sleep(for: .milliseconds(Int64($0 * 1000))) }) {
                throw DownloadError(.cancelled, "cancelled")
            }
            return true
        }
        if let total, written != total {
            throw DownloadError(.lengthMismatch, "received \(written) bytes, expected \(total)")
        }
        return written
    }

    /// Checks the checksums, if any, and readies the file for its commit.
    ///
    /// - Parameter ownsName: whether this download reserved `name` (the commit then releases it).
    private func finish(_ partial: PartialFile, name: String, fileURL: URL, ownsName: Bool, byteCount: Int64, head: ResponseHead,
                        replaceAllowed: Bool, recordMayExist: Bool = true, verification: Verification?,
                        hasher: StreamHasher?, mark: FinishedFileMark.Identity?) throws(DownloadError) -> FileCommit {
        // Not stopped by a cancellation: every byte is on disk by now, and a partial file cut
        // off here would have no record to resume it by (the check of a 2 GiB file that was
        // hashed while it arrived takes milliseconds).
        let sha256 = try verification?.verify(partial, length: byteCount, hasher: hasher)
        partial.markFinished()
        if let mark { FinishedFileMark.write(mark, to: partial.descriptor) }   // a rerun then knows the file
        let policy = job.request.conflictPolicy ?? configuration.conflictPolicy
        return FileCommit(partial: partial, name: name, fileURL: fileURL, ownsName: ownsName, byteCount: byteCount, head: head,
                          replaceAllowed: replaceAllowed, renameOnConflict: policy == .rename,
                          recordMayExist: recordMayExist, sha256: sha256, target: target)
    }
}
