import HaulHTTP
/// What the first response of an attempt means for the bytes already on disk: a pure function
/// of the resume record, the range that was asked for and the response head.
///
/// The rules (issue "Resume anything"): a 206 whose `Content-Range` matches the asked start,
/// the end of the file and the recorded total continues; a 200 means the file changed or Range
/// is ignored, so the download starts over from byte 0 with that very response (never appended);
/// a 206 for another start, end or total (or of an unknown total) is a protocol error and nothing
/// is written; a 416 means done only when the recorded file is complete and its total matches,
/// otherwise start over.
package enum ResumeDecision: Equatable {
    /// Continue: the response carries the bytes from the asked start to the end.
    case resume
    /// Discard what is on disk: the response is the whole file from byte 0 (a 200).
    case startOver(reason: String)
    /// The partial is complete and the server confirms it (416 for the end of the same file).
    case alreadyComplete
    /// Discard what is on disk and ask again without a range (the response cannot be used).
    case restartFresh(reason: String)
    /// A fresh request for `bytes=0-` found an empty file (416 for `*/0`).
    case emptyFile

    /// Facts from a response head that the engine needs.
    package struct ResponseFacts: Equatable {
        var status: Int
        var contentRange: ContentRange?
        package var strongETag: String?
        package var lastModified: String?
        /// The full length of the file, when the response tells it.
        var totalLength: Int64?
        /// Whether the server honours ranges (a 206, or `Accept-Ranges: bytes`).
        var acceptsRanges: Bool

        package init(_ head: ResponseHead, framing: ResponseParser.Framing?) {
            status = head.status
            contentRange = head.headers["Content-Range"].flatMap(ContentRange.parse)
            strongETag = ResumeRecord.strongETag(head.headers["ETag"])
            lastModified = head.headers["Last-Modified"]
            switch (status, contentRange) {
            case (206, .satisfied(_, _, let complete)?): totalLength = complete
            case (416, .unsatisfied(let complete)?): totalLength = complete
            case (200, _): if case .length(let n)? = framing { totalLength = n }
            default: totalLength = nil
            }
            acceptsRanges = status == 206 || head.headers.list("Accept-Ranges", contains: "bytes")
        }
    }

    /// Decides, for a request that asked for `bytes=requestedStart-` (with `If-Range` when resuming).
    ///
    /// - Parameters:
    ///   - record: the valid resume record the request was based on, or `nil` for a fresh start.
    ///   - requestedStart: the first byte asked for (0 for a fresh start).
    ///   - facts: the response.
    ///   - checksByContent: the download checks every piece against its checksum: the file is
    ///     named by its content, not by a server's validator (mirrors have ETags of their own),
    ///     so another validator is no reason to start over.
    /// - Throws: `rangeMismatch` for a 206 that answers another range (nothing may be written).
    static func decide(record: ResumeRecord?, requestedStart: Int64, facts: ResponseFacts,
                       checksByContent: Bool = false) throws(DownloadError) -> ResumeDecision {
        switch facts.status {
        case 206:
            guard case .satisfied(let first, let last, let complete)? = facts.contentRange else {
                throw DownloadError(.rangeMismatch, "the server answered 206 without a valid Content-Range")
            }
            // Another validator means another file, whatever range it came with (If-Range was ignored).
            if let record, !checksByContent, let change = change(from: record, to: facts) { return .restartFresh(reason: change) }
            guard first == requestedStart else {
                throw DownloadError(.rangeMismatch, "asked for bytes from \(requestedStart), the server sent bytes from \(first)")
            }
            guard let complete else {
                // "bytes a-b/*": nothing tells whether b is the last byte, so the file could end up cut short.
                throw DownloadError(.rangeMismatch, "asked for bytes \(requestedStart) to the end, the server sent \(first)-\(last) of an unknown length")
            }
            if last != complete - 1 {
                throw DownloadError(.rangeMismatch, "asked for bytes \(requestedStart) to the end, the server sent \(first)-\(last) of \(complete)")
            }
            guard let record else { return .resume }   // a fresh start from 0: nothing to compare
            guard complete == record.totalLength else {
                throw DownloadError(.rangeMismatch, "the server's file is \(complete) bytes, the partial one \(record.totalLength)")
            }
            return .resume
        case 200:
            if let record {
                let why = facts.strongETag != nil && facts.strongETag != record.etag
                    ? "the file changed on the server (new ETag)" : "the server sent the whole file instead of the rest"
                return .startOver(reason: "\(why); starting over from byte 0")
            }
            return .resume   // a fresh start: the 200 carries the file from byte 0
        case 416:
            if record == nil {
                if case .unsatisfied(0)? = facts.contentRange { return .emptyFile }
                throw DownloadError(.rangeMismatch, "the server refused bytes=0- (416) for a file that is not empty")
            }
            if let record, case .unsatisfied(let complete)? = facts.contentRange, complete == record.totalLength,
               record.completed.contains(0..<record.totalLength), requestedStart == record.totalLength,
               facts.strongETag == nil || facts.strongETag == record.etag,
               record.etag != nil || facts.lastModified == nil || facts.lastModified == record.lastModified {
                return .alreadyComplete
            }
            return .restartFresh(reason: "the server cannot serve the rest of the partial file (416); starting over")
        default:
            return .resume   // not reached: non-2xx answers are errors before this
        }
    }

    /// Why the response's validator says the file is not the recorded one, or `nil` when it does not.
    private static func change(from record: ResumeRecord, to facts: ResponseFacts) -> String? {
        if let etag = facts.strongETag, let recorded = record.etag, etag != recorded {
            return "the file changed on the server (new ETag); starting over"
        }
        if record.etag == nil, let modified = facts.lastModified, let recorded = record.lastModified, modified != recorded {
            return "the file changed on the server (new Last-Modified); starting over"
        }
        return nil
    }
}
