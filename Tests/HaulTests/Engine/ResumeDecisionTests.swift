import HaulTestSupport
import Testing
@testable import Haul
import HaulCore
import HaulHTTP

/// Every branch of ``ResumeDecision/decide(record:requestedStart:facts:)``, without sockets.
///
/// The record describes a 1000-byte file of which bytes 0..<400 are on disk, so a resume asks
/// for `bytes=400-` with `If-Range: "v1"`.
@Suite struct ResumeDecisionTests {
    static let total: Int64 = 1000
    static let url = try! HTTPURL.parse("http://127.0.0.1:8080/file.bin")

    /// A record with `etag`/`lastModified` for a file of `total` bytes, `completed` on disk.
    static func record(etag: String? = "\"v1\"", lastModified: String? = nil, total: Int64 = total,
                       completed: [Range<Int64>] = [0..<400]) -> ResumeRecord {
        ResumeRecord(url: url, finalURL: url, etagHeader: etag, lastModified: lastModified, totalLength: total,
                     completed: ByteRangeSet(completed))
    }

    /// The facts of a response with `status` and `headers` (a `Content-Length` body of `length` bytes).
    static func facts(_ status: Int, _ headers: [(name: String, value: String)], length: Int64? = nil) -> ResumeDecision.ResponseFacts {
        let head = ResponseHead(status: status, headers: HTTPHeaders(headers))
        return ResumeDecision.ResponseFacts(head, framing: length.map { .length($0) })
    }

    static func decide(_ record: ResumeRecord?, from start: Int64, _ facts: ResumeDecision.ResponseFacts) throws(DownloadError) -> ResumeDecision {
        try ResumeDecision.decide(record: record, requestedStart: start, facts: facts)
    }

    /// The error code `decide` throws, or `nil` when it returns.
    static func thrownCode(_ record: ResumeRecord?, from start: Int64, _ facts: ResumeDecision.ResponseFacts) -> DownloadError.Code? {
        do throws(DownloadError) {
            _ = try decide(record, from: start, facts)
            return nil
        } catch {
            return error.code
        }
    }

    // MARK: 206

    @Test func partialContentForTheAskedRestOfTheSameFileResumes() throws {
        let facts = Self.facts(206, [("Content-Range", "bytes 400-999/1000"), ("ETag", "\"v1\"")])
        #expect(try Self.decide(Self.record(), from: 400, facts) == .resume)
    }

    @Test func partialContentWithoutAnETagResumesOnALastModifiedRecord() throws {
        let date = "Tue, 01 Dec 2026 10:00:00 GMT"
        let record = Self.record(etag: nil, lastModified: date)
        let facts = Self.facts(206, [("Content-Range", "bytes 400-999/1000"), ("Last-Modified", date)])
        #expect(try Self.decide(record, from: 400, facts) == .resume)
    }

    @Test func freshPartialContentFromZeroStarts() throws {
        let facts = Self.facts(206, [("Content-Range", "bytes 0-999/1000"), ("ETag", "\"v1\"")])
        #expect(try Self.decide(nil, from: 0, facts) == .resume)
        #expect(facts.totalLength == 1000)
        #expect(facts.acceptsRanges)
    }

    @Test(arguments: [
        "bytes 300-999/1000",   // another start
        "bytes 0-999/1000",     // the whole file as a 206
        "bytes 400-899/1000",   // stops before the end
        "bytes 400-1199/1200",  // another total
        "bytes 400-799/800",    // a shorter file
        "bytes 400-999/*",      // unknown total: cannot be compared with the record
    ])
    func partialContentForAnotherRangeIsARangeMismatch(contentRange: String) {
        let facts = Self.facts(206, [("Content-Range", contentRange), ("ETag", "\"v1\"")])
        #expect(Self.thrownCode(Self.record(), from: 400, facts) == .rangeMismatch)
    }

    @Test(arguments: [nil, "bytes */1000", "bytes 400-999", "items 400-999/1000", "bytes 999-400/1000"])
    func partialContentWithoutAValidContentRangeIsARangeMismatch(contentRange: String?) {
        let facts = Self.facts(206, contentRange.map { [("Content-Range", $0)] } ?? [])
        #expect(Self.thrownCode(Self.record(), from: 400, facts) == .rangeMismatch)
        #expect(Self.thrownCode(nil, from: 0, facts) == .rangeMismatch)
    }

    @Test func freshPartialContentFromAnotherStartIsARangeMismatch() {
        let facts = Self.facts(206, [("Content-Range", "bytes 10-999/1000")])
        #expect(Self.thrownCode(nil, from: 0, facts) == .rangeMismatch)
    }

    /// A 206 with a new ETag for another total: the server ignored If-Range for a new file, so
    /// start over (not a range mismatch: nothing is wrong with the new file).
    @Test(arguments: ["bytes 400-1199/1200", "bytes 400-799/800", "bytes 300-999/1000"])
    func partialContentWithANewETagRestartsFreshWhateverItsRange(contentRange: String) throws {
        let facts = Self.facts(206, [("Content-Range", contentRange), ("ETag", "\"v2\"")])
        guard case .restartFresh = try Self.decide(Self.record(), from: 400, facts) else {
            Issue.record("expected restartFresh")
            return
        }
    }

    /// With every piece checked against its checksum, the file is named by its content: a mirror's
    /// ETag of its own is no reason to start over, but the range and the length still must match.
    @Test func aDownloadCheckedByContentResumesAcrossValidators() throws {
        let other = Self.facts(206, [("Content-Range", "bytes 400-999/1000"), ("ETag", "\"mirror\"")])
        #expect(try ResumeDecision.decide(record: Self.record(), requestedStart: 400, facts: other, checksByContent: true) == .resume)
        let shorter = Self.facts(206, [("Content-Range", "bytes 400-799/800"), ("ETag", "\"mirror\"")])
        #expect(throws: DownloadError.self) {
            try ResumeDecision.decide(record: Self.record(), requestedStart: 400, facts: shorter, checksByContent: true)
        }
        let whole = Self.facts(200, [("ETag", "\"mirror\"")], length: 1000)
        guard case .startOver = try ResumeDecision.decide(record: Self.record(), requestedStart: 400, facts: whole, checksByContent: true) else {
            Issue.record("a 200 is the whole file: expected startOver")
            return
        }
    }

    /// `bytes 0-99/*` to `bytes=0-`: nothing says byte 99 is the last, so saving it could cut the file short.
    @Test(arguments: ["bytes 0-99/*", "bytes 0-999/*"])
    func freshPartialContentOfAnUnknownTotalIsARangeMismatch(contentRange: String) {
        let facts = Self.facts(206, [("Content-Range", contentRange), ("ETag", "\"v1\"")])
        #expect(Self.thrownCode(nil, from: 0, facts) == .rangeMismatch)
    }

    @Test func partialContentWithANewStrongETagRestartsFresh() throws {
        let facts = Self.facts(206, [("Content-Range", "bytes 400-999/1000"), ("ETag", "\"v2\"")])
        guard case .restartFresh(let reason) = try Self.decide(Self.record(), from: 400, facts) else {
            Issue.record("expected restartFresh")
            return
        }
        #expect(reason.contains("ETag"))
    }

    @Test
    func partialContentWithANewLastModifiedRestartsFresh() throws {
        let record = Self.record(etag: nil, lastModified: "Tue, 01 Dec 2026 10:00:00 GMT")
        let facts = Self.facts(206, [("Content-Range", "bytes 400-999/1000"), ("Last-Modified", "Wed, 02 Dec 2026 10:00:00 GMT")])
        guard case .restartFresh = try Self.decide(record, from: 400, facts) else {
            Issue.record("expected restartFresh for a changed Last-Modified")
            return
        }
    }

    @Test func aWeakETagNeverJudgesTheFile() throws {
        // A weak ETag in the response is neither a match nor a change: the record's strong one rules.
        let weak = Self.facts(206, [("Content-Range", "bytes 400-999/1000"), ("ETag", "W/\"v2\"")])
        #expect(weak.strongETag == nil)
        #expect(try Self.decide(Self.record(), from: 400, weak) == .resume)
        // A weak ETag is never kept in a record, so it is never sent as If-Range.
        let date = "Tue, 01 Dec 2026 10:00:00 GMT"
        let record = Self.record(etag: "W/\"v1\"", lastModified: date)
        #expect(record.etag == nil)
        #expect(record.ifRangeValidator == date)
        #expect(Self.record(etag: "W/\"v1\"").ifRangeValidator == nil)
        #expect(Self.record().ifRangeValidator == "\"v1\"")
    }

    // MARK: 200

    @Test func okWithARecordStartsOverFromByteZero() throws {
        let facts = Self.facts(200, [("ETag", "\"v1\"")], length: 1000)
        guard case .startOver(let reason) = try Self.decide(Self.record(), from: 400, facts) else {
            Issue.record("expected startOver")
            return
        }
        #expect(reason.contains("whole file"))
    }

    @Test func okWithANewETagSaysTheFileChanged() throws {
        let facts = Self.facts(200, [("ETag", "\"v2\"")], length: 1200)
        guard case .startOver(let reason) = try Self.decide(Self.record(), from: 400, facts) else {
            Issue.record("expected startOver")
            return
        }
        #expect(reason.contains("new ETag"))
        #expect(facts.totalLength == 1200)
    }

    @Test func okWithoutARecordIsAFreshStart() throws {
        let facts = Self.facts(200, [], length: 1000)
        #expect(try Self.decide(nil, from: 0, facts) == .resume)
        #expect(facts.totalLength == 1000)
        #expect(!facts.acceptsRanges)
        #expect(Self.facts(200, [("Accept-Ranges", "none")], length: 1).acceptsRanges == false)
        #expect(Self.facts(200, [("Accept-Ranges", "Bytes")], length: 1).acceptsRanges)
        #expect(Self.facts(200, [("Accept-Ranges", "none"), ("Accept-Ranges", "bytes")], length: 1).acceptsRanges,
                "a second field counts too")
        #expect(Self.facts(200, [("Accept-Ranges", "none, BYTES")], length: 1).acceptsRanges)
    }

    // MARK: 416

    @Test func rangeNotSatisfiableForACompleteMatchingPartialIsAlreadyComplete() throws {
        let record = Self.record(completed: [0..<1000])
        let facts = Self.facts(416, [("Content-Range", "bytes */1000")])
        #expect(try Self.decide(record, from: 1000, facts) == .alreadyComplete)
    }

    /// A record's completed ranges, the asked start and the 416's `Content-Range`.
    struct UnsatisfiableCase: Sendable, CustomTestStringConvertible {
        var completed: [Range<Int64>]
        var start: Int64
        var contentRange: String?
        var why: String
        var testDescription: String { why }
    }

    @Test(arguments: [
        UnsatisfiableCase(completed: [0..<1000], start: 1000, contentRange: "bytes */1200", why: "another total"),
        UnsatisfiableCase(completed: [0..<1000], start: 1000, contentRange: "bytes */800", why: "a shorter file"),
        UnsatisfiableCase(completed: [0..<1000], start: 1000, contentRange: nil, why: "no total"),
        UnsatisfiableCase(completed: [0..<400], start: 400, contentRange: "bytes */1000", why: "an incomplete partial"),
        UnsatisfiableCase(completed: [0..<400], start: 400, contentRange: "bytes */300", why: "the file shrank"),
        UnsatisfiableCase(completed: [0..<400, 500..<1000], start: 400, contentRange: "bytes */1000", why: "a hole"),
    ])
    func rangeNotSatisfiableOtherwiseRestartsFresh(_ case: UnsatisfiableCase) throws {
        let record = Self.record(completed: `case`.completed)
        let facts = Self.facts(416, `case`.contentRange.map { [("Content-Range", $0)] } ?? [])
        guard case .restartFresh = try Self.decide(record, from: `case`.start, facts) else {
            Issue.record("expected restartFresh")
            return
        }
    }

    @Test
    func rangeNotSatisfiableWithANewETagRestartsFresh() throws {
        let record = Self.record(completed: [0..<1000])
        let facts = Self.facts(416, [("Content-Range", "bytes */1000"), ("ETag", "\"v2\"")])
        guard case .restartFresh = try Self.decide(record, from: 1000, facts) else {
            Issue.record("expected restartFresh for a 416 carrying another ETag")
            return
        }
    }

    @Test func freshRangeNotSatisfiableForAnEmptyFileIsEmptyFile() throws {
        #expect(try Self.decide(nil, from: 0, Self.facts(416, [("Content-Range", "bytes */0")])) == .emptyFile)
    }

    @Test(arguments: ["bytes */10", nil])
    func freshRangeNotSatisfiableForANonEmptyFileIsARangeMismatch(contentRange: String?) {
        let facts = Self.facts(416, contentRange.map { [("Content-Range", $0)] } ?? [])
        #expect(Self.thrownCode(nil, from: 0, facts) == .rangeMismatch)
    }
}
