#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import HaulCore
import HaulHTTP

extension DownloadAttempt {
    /// What the first response leads to.
    enum Plan {
        /// Nothing to write: skipped, finished by an earlier run, or complete on disk.
        case done(DownloadJob.Ending)
        /// Bytes to move into a partial file.
        case write(FileToWrite)
    }

    /// The file an attempt writes, and what it knows about it.
    struct FileToWrite {
        let name: String
        let partial: PartialFile
        let fileURL: URL
        /// The record it resumes from; `nil`: from byte 0.
        let record: ResumeRecord?
        /// The checksums of the pieces the record kept.
        let pieces: BlockHashes
        let head: ResponseHead
        let facts: ResumeDecision.ResponseFacts
        let verification: Verification?
        let resourceKey: String
    }

    /// Decides what the first response means for the bytes on disk (``ResumeDecision``), then
    /// the name and the partial file to write.
    ///
    /// - Throws: `resourceChanged` (start over with a new request), `locked`, status and
    ///   protocol errors, file errors.
    func plan(for exchange: HTTPExchange, found: inout FoundPartial, predicted: String,
              resourceKey: String) throws(DownloadError) -> Plan {
        try DownloadJob.validate(exchange.head, askedForRange: true)
        let facts = ResumeDecision.ResponseFacts(exchange.head, framing: exchange.framing)
        let verification = Verification(request: job.request, head: exchange.head, record: found.record)
        let requestedStart = found.record.map(Self.firstMissingByte) ?? 0
        switch try ResumeDecision.decide(record: found.record, requestedStart: requestedStart, facts: facts,
                                         checksByContent: job.request.pieces != nil) {
        case .restartFresh(let reason):
            throw DownloadError(.resourceChanged, reason)
        case .alreadyComplete:
            return .done(.commit(try commitComplete(&found, named: predicted, head: exchange.head, verification: verification)))
        case .startOver(let reason):
            events.yield(.startingOver(reason: reason))
            found.record = nil
            found.pieces = BlockHashes()
        case .resume, .emptyFile:
            break
        }
        let name: String
        let partial: PartialFile
        if found.record != nil, let resumed = found.partial {
            guard job.resources.folders.reservations.reserve(predicted, in: folder) else {
                throw DownloadError(.locked, "another download is writing '\(folder.path)/\(predicted)'")
            }
            found.partial = nil
            (name, partial) = (predicted, resumed)
        } else {
            switch try chooseName(head: exchange.head, facts: facts, found: &found, predicted: predicted,
                                  resourceKey: resourceKey, verification: verification) {
            case .done(let result): return .done(.done(result))
            case .name(let chosen): (name, partial) = (chosen, try makePartial(chosen, found: &found, predicted: predicted))
            }
        }
        return .write(FileToWrite(name: name, partial: partial, fileURL: target.fileURL(name), record: found.record,
                                  pieces: found.pieces, head: exchange.head, facts: facts, verification: verification,
                                  resourceKey: resourceKey))
    }

    /// A server that answers 416 to the first missing byte of a complete partial file: it only
    /// needs its checks and its commit (a failed checksum discards it).
    private func commitComplete(_ found: inout FoundPartial, named name: String, head: ResponseHead,
                                verification: Verification?) throws(DownloadError) -> FileCommit {
        guard let partial = found.partial, let record = found.record else {
            throw DownloadError(.internalError, "complete without a partial")
        }
        found.partial = nil
        // A 416 may have no validators: the record's mark the file.
        let mark = Self.identity(record.resourceKey, record.totalLength, record.etag, record.lastModified, url: url)
        do throws(DownloadError) {
            return try finish(partial, name: name, fileURL: target.fileURL(name), ownsName: false, byteCount: record.totalLength,
                              head: head, replaceAllowed: target.fixedName != nil, verification: verification,
                              hasher: nil, mark: mark)
        } catch {
            if error.code == .checksumMismatch {
                ResumeRecord.remove(for: name, in: folder)
                partial.discard()
            }
            throw error
        }
    }

    private enum NameChoice { case done(DownloadResult), name(String) }

    /// The name from the server's hint and the policy, reserved; or the end of the download when
    /// the policy skips, or an earlier run finished this very file.
    private func chooseName(head: ResponseHead, facts: ResumeDecision.ResponseFacts, found: inout FoundPartial,
                            predicted: String, resourceKey: String,
                            verification: Verification?) throws(DownloadError) -> NameChoice {
        let check = FinishedCheck(attempt: self, facts: facts, resourceKey: resourceKey, verification: verification)
        let hint = DownloadTarget.NameHint(contentDisposition: head.headers["Content-Disposition"],
                                           contentType: head.headers["Content-Type"])
        switch try target.choose(hint: hint, urlPath: url.path, urlName: predicted, policy: policy, finished: check.isFinished) {
        case .skip(let taken):
            return .done(DownloadResult(response: head, fileURL: target.fileURL(taken), byteCount: 0, skipped: true))
        case .finished(let done):
            if done == predicted, let stale = found.partial {   // its record was rejected: nothing resumes it
                found.partial = nil
                ResumeRecord.remove(for: predicted, in: folder)
                stale.discard()
            }
            return .done(DownloadResult(response: head, fileURL: target.fileURL(done), byteCount: facts.totalLength ?? 0,
                                        skipped: false, sha256: check.sha256, alreadyComplete: true))
        case .write(let chosen, _):
            // A cancellation may have cut short the check of a finished file (its checksum): then
            // it was not recognised, and nothing is written.
            if signal.isCancelled {
                target.release(chosen)
                throw DownloadError(.cancelled, "cancelled")
            }
            return .name(chosen)
        }
    }

    /// The partial file for `name`: the one found under it emptied (its old record removed, so
    /// it never outlives its bytes), or a new one. The name is released when that fails.
    private func makePartial(_ name: String, found: inout FoundPartial, predicted: String) throws(DownloadError) -> PartialFile {
        do throws(DownloadError) {
            if name == predicted, let reused = found.partial {
                try reused.truncate(to: 0)
                found.partial = nil
                ResumeRecord.remove(for: name, in: folder)
                return reused
            }
            // A record without its partial file is never read (records are only looked at beside
            // a partial), and the first checkpoint replaces it: no lookup needed here.
            return try PartialFile.createEmpty(name + PartialFile.suffix, in: folder)
        } catch {
            target.release(name)
            throw error
        }
    }
}

/// Whether a file found under a name is this URL's download, finished by an earlier run (a
/// rerun after an interruption): marked with this response's identity and, when the download
/// is verified, matching its checksums.
private final class FinishedCheck {
    private let attempt: DownloadAttempt
    private let facts: ResumeDecision.ResponseFacts
    private let resourceKey: String
    private let verification: Verification?
    private var identity: FinishedFileMark.Identity??   // made once, and only if a name is taken
    /// The SHA-256 of the file found finished.
    private(set) var sha256: String?

    init(attempt: DownloadAttempt, facts: ResumeDecision.ResponseFacts, resourceKey: String, verification: Verification?) {
        self.attempt = attempt
        self.facts = facts
        self.resourceKey = resourceKey
        self.verification = verification
    }

    /// Not when the caller asked to start over, nor when the policy says to replace or keep
    /// whatever exists.
    func isFinished(_ name: String) -> Bool {
        let policy = attempt.policy
        guard !attempt.job.request.startOver, policy != .overwrite, policy != .skip || attempt.target.fixedName != nil,
              let total = facts.totalLength else { return false }
        if identity == nil {
            identity = .some(DownloadAttempt.identity(resourceKey, total, facts.strongETag, facts.lastModified, url: attempt.url))
        }
        guard let identity = identity ?? nil else { return false }
        return FinishedFileMark.isFinished(name, in: attempt.folder, as: identity) { descriptor in
            guard let verification else { return true }
            let signal = attempt.signal
            let digests = try? StreamHasher(algorithms: verification.algorithms, descriptor: descriptor,
                                            threads: attempt.job.resources.threads)
                .finish(length: total, stop: { signal.isCancelled })
            sha256 = digests.flatMap { try? verification.check($0) }
            return sha256 != nil
        }
    }
}
