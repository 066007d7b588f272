#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import HaulCore
import HaulHTTP

extension DownloadAttempt {
    /// Moves the bytes into `file` (taking `exchange` over), checks them, and readies the commit.
    ///
    /// After a failure the partial file stays for a resume when its bytes can be trusted
    /// (``keepsPartial(after:)``); after a protocol or integrity failure it goes, with its record.
    func write(_ file: FileToWrite, from exchange: HTTPExchange, slot: HostSlotClaim) throws(DownloadError) -> FileCommit {
        var ownsName = true   // until the commit owns the reservation
        defer { if ownsName { target.release(file.name) } }
        do throws(DownloadError) {
            let hasher = file.verification.map {
                StreamHasher(algorithms: $0.algorithms, descriptor: file.partial.descriptor, threads: job.resources.threads)
            }
            defer { hasher?.stop() }   // before the partial file closes
            let moved = try transfer(file, from: exchange, slot: slot, hasher: hasher)
            // The validators of this response, as a rerun's check will see them.
            let marked = (file.record?.totalLength ?? file.facts.totalLength).flatMap { total in
                Self.identity(file.resourceKey, total, file.facts.strongETag, file.facts.lastModified, url: url)
            }
            let commit = try finish(file.partial, name: file.name, fileURL: file.fileURL, ownsName: true, byteCount: moved.written,
                                    head: file.head, replaceAllowed: target.fixedName != nil || policy == .overwrite,
                                    recordMayExist: moved.recordWritten, verification: file.verification,
                                    hasher: hasher, mark: marked, sources: moved.sources)
            ownsName = false
            return commit
        } catch {
            if Self.keepsPartial(after: error) || signal.isCancelled {
                file.partial.closeKeeping()
            } else {
                ResumeRecord.remove(for: file.name, in: folder)
                file.partial.discard()
            }
            throw error
        }
    }

    /// Whether the bytes written before `error` can be trusted: after a network failure, a full
    /// disk, a pause or cancellation, a name taken meanwhile, or a commit gate's refusal (the
    /// file is another owner's now) they stay for a resume.
    static func keepsPartial(after error: DownloadError) -> Bool {
        switch error.code {
        case .cancelled, .diskFull, .destinationExists, .locked,
             .dnsFailure, .connectionRefused, .connectionReset, .connectTimeout, .headerTimeout, .stalled,
             .truncatedBody, .networkError:
            true
        default:
            false
        }
    }

    /// Checks the checksums, if any, and readies the file for its commit.
    ///
    /// - Parameter ownsName: whether this download reserved `name` (the commit then releases it).
    func finish(_ partial: PartialFile, name: String, fileURL: URL, ownsName: Bool, byteCount: Int64, head: ResponseHead,
                replaceAllowed: Bool, recordMayExist: Bool = true, verification: Verification?,
                hasher: StreamHasher?, mark: FinishedFileMark.Identity?, sources: [SourceReport] = []) throws(DownloadError) -> FileCommit {
        // Not stopped by a cancellation: every byte is on disk by now, and a partial file cut
        // off here would have no record to resume it by.
        let sha256 = try verification?.verify(partial, length: byteCount, hasher: hasher, threads: job.resources.threads)
        if let gate = job.request.commitGate, !gate() {
            throw DownloadError(.locked, "\(name): the download belongs to another owner now; its file stays partial")
        }
        partial.markFinished(mode: job.resources.finishedFileMode)
        if let mark { FinishedFileMark.write(mark, to: partial.descriptor) }   // a rerun then knows the file
        return FileCommit(partial: partial, name: name, fileURL: fileURL, ownsName: ownsName, byteCount: byteCount, head: head,
                          replaceAllowed: replaceAllowed, renameOnConflict: policy == .rename,
                          recordMayExist: recordMayExist, sha256: sha256, target: target, sources: sources)
    }
}

// MARK: - Moving the bytes

extension DownloadAttempt {
    /// Streams the response (and, for a resumable file, the other segments) into the partial
    /// file. Owns `exchange`: it is finished or closed on every path, and the first request's
    /// slot goes back with it (or with the segmented transfer's first worker).
    ///
    /// - Returns: the bytes the file holds, and whether a resume record may exist.
    private func transfer(_ file: FileToWrite, from exchange: HTTPExchange, slot: HostSlotClaim,
                          hasher: StreamHasher?) throws(DownloadError) -> (written: Int64, recordWritten: Bool, sources: [SourceReport]) {
        if file.facts.status == 416 {   // an empty file (ResumeDecision.emptyFile): nothing to read
            exchange.close()
            try writeEmpty(file)
            return (0, file.record != nil, [])
        }
        let shape = TransferShape(file, exchange: exchange, limited: limiter != nil)
        do throws(DownloadError) {
            // A full disk is reported before the transfer; a body already here has no transfer
            // left to spare, and its one write reports a full disk just the same (`diskFull`).
            if let total = shape.total, !shape.wholeBodyHere { try file.partial.ensureSpace(for: total) }
        } catch {
            exchange.close()
            throw error
        }
        let progress = ProgressReporter(events: events, interval: configuration.progressInterval, ticker: job.resources.ticker)
        defer { progress.finish() }
        let segmented: SegmentedTransfer?
        do throws(DownloadError) {
            segmented = try shape.resumable ? segmentedTransfer(file, exchange: exchange, progress: progress, hasher: hasher) : nil
        } catch {
            exchange.close()
            throw error
        }
        let announce = { [events, url] (connections: Int, servers: Int) in
            events.yield(.started(DownloadStart(redactedURL: url.description, fileURL: file.fileURL, totalBytes: shape.total,
                                                resumedFrom: shape.resumedFrom, connections: connections, response: file.head,
                                                servers: servers, metalinkURL: Self.metalinkLink(file.head, responseURL: exchange.finalURL))))
            progress.start(total: shape.total, alreadyComplete: shape.resumedFrom, ticks: !shape.wholeBodyHere)
        }
        if let segmented, let total = shape.total {
            announce(segmented.plannedConnections, segmented.serverCount)
            slot.handOver()   // the transfer's first worker gives it back
            job.control.publish(transfer: segmented)
            defer { job.control.publish(transfer: nil) }
            try segmented.run(first: exchange, firstBuffer: buffer, run: signal)
            return (total, file.record != nil || segmented.checkpointed, segmented.sourceReport)
        }
        announce(1, 1)
        let written: Int64
        do throws(DownloadError) {
            written = try stream(exchange, into: file.partial, total: shape.total, progress: progress, hasher: hasher)
        } catch {
            exchange.close()
            throw error
        }
        exchange.finish(pool: job.resources.pool)
        slot.release()
        try job.request.pieces?.checkAll(descriptor: file.partial.descriptor, total: written)
        return (written, file.record != nil, [])
    }

    /// The Metalink document `head` names (``DownloadStart/metalinkURL``), if any.
    static func metalinkLink(_ head: ResponseHead, responseURL: HTTPURL) -> URL? {
        let field = head.headers.values(for: "Link")
        guard !field.isEmpty else { return nil }
        return DuplicateLinks(fieldValues: field, responseURL: responseURL).metalink.flatMap { URL(string: $0.stringWithoutUserinfo) }
    }

    /// A 416 for a file of no bytes: an empty file, started and complete at once.
    private func writeEmpty(_ file: FileToWrite) throws(DownloadError) {
        try file.partial.truncate(to: 0)
        events.yield(.started(DownloadStart(redactedURL: url.description, fileURL: file.fileURL, totalBytes: 0,
                                            resumedFrom: 0, connections: 1, response: file.head)))
        events.yield(.progress(DownloadProgress(completedBytes: 0, totalBytes: 0, bytesPerSecond: 0, estimatedTimeRemaining: 0)))
    }

    /// One connection from byte 0 to the end: an unknown length, a server without ranges, or a
    /// body that arrived whole with its head.
    private func stream(_ exchange: HTTPExchange, into partial: PartialFile, total: Int64?,
                        progress: ProgressReporter, hasher: StreamHasher?) throws(DownloadError) -> Int64 {
        let limiter = self.limiter
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
}
