import Foundation
import HaulTestSupport
import Testing
@testable import Haul
import HaulCore
import HaulHTTP
import HaulCrypto

/// Sample records shared by the codec and file tests.
enum ResumeRecordSamples {
    static let key = SHA256.hex(Array("https://example.com:443/files/big.iso".utf8))

    static let full = ResumeRecord(
        redactedURL: "https://example.com/files/big.iso?X-Amz-Signature=REDACTED",
        redactedFinalURL: "https://cdn.example.com/big.iso",
        resourceKey: key, etag: "\"abc-123\"", lastModified: "Tue, 01 Dec 2026 10:00:00 GMT",
        totalLength: 1_048_576, completed: ByteRangeSet([0..<524_288, 600_000..<700_001]),
        expectedChecksum: "sha256:" + SHA256.hex([]),
        serverDigest: "sha256=" + SHA256.hex([1]),
        blockHashes: [BlockHash(range: 0..<524_288, crc32c: 0xABAB_0001),
                      BlockHash(range: 600_000..<700_001, crc32c: 0x0000_00FF)],
        verifiedPieces: ByteRangeSet([0..<262_144, 262_144..<524_288])
    )

    static let minimal = ResumeRecord(
        redactedURL: "http://h/", redactedFinalURL: "http://h/", resourceKey: key, etag: nil,
        lastModified: nil, totalLength: 0, completed: ByteRangeSet(), expectedChecksum: nil
    )

    static let awkward = ResumeRecord(
        redactedURL: "https://h/a b%20c?x=%0A\r\nlength 5", redactedFinalURL: "",
        resourceKey: key, etag: "\"é\nchecksum 00\"", lastModified: "",
        totalLength: Int64.max, completed: ByteRangeSet([0..<1, Int64.max - 1..<Int64.max]),
        expectedChecksum: "100%"
    )

    static let all = [full, minimal, awkward]
}

/// `body` followed by its correct checksum line: lets a test write records that pass the
/// checksum and fail (or pass) on what they say.
func checksummed(_ body: String) -> [UInt8] {
    let bytes = Array(body.utf8)
    return bytes + Array("checksum \(SHA256.hex(bytes))\n".utf8)
}

@Suite(.throttled) struct ResumeRecordCodecTests {
    @Test(arguments: ResumeRecordSamples.all)
    func roundTrips(record: ResumeRecord) {
        #expect(ResumeRecord.decode(record.encoded()) == .success(record))
    }

    @Test func encodedFormIsReadableLines() {
        let text = String(decoding: ResumeRecordSamples.full.encoded(), as: UTF8.self)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(Array(lines.dropLast(2)) == [
            "haul-resume 2",
            "url https://example.com/files/big.iso?X-Amz-Signature=REDACTED",
            "final-url https://cdn.example.com/big.iso",
            "resource \(ResumeRecordSamples.key)",
            "etag \"abc-123\"",
            "last-modified Tue, 01 Dec 2026 10:00:00 GMT",
            "length 1048576",
            "completed 0-524287,600000-700000",
            "expected-checksum sha256:\(SHA256.hex([]))",
            "server-digest sha256=\(SHA256.hex([1]))",
            "block-hashes 0-524287:abab0001,600000-700000:000000ff",
            "verified-pieces 0-524287",
        ])
        let body = Array(text.utf8.dropLast(lines[lines.count - 2].utf8.count + 1))
        #expect(lines[lines.count - 2] == "checksum \(SHA256.hex(body))")
        #expect(lines.last == "")
    }

    @Test func emptyValuesAreTheKeyAlone() {
        let text = String(decoding: ResumeRecordSamples.minimal.encoded(), as: UTF8.self)
        #expect(text.contains("\ncompleted\n"))
        #expect(!text.contains("etag"))
        #expect(!text.contains("expected-checksum"))
    }

    @Test func injectedLineBreaksStayInsideTheirValue() {
        let record = ResumeRecordSamples.awkward
        let text = String(decoding: record.encoded(), as: UTF8.self)
        #expect(!text.contains("\r"))
        let keys = text.split(separator: "\n").map { $0.split(separator: " ", maxSplits: 1).first.map(String.init) ?? "" }
        #expect(keys == ["haul-resume", "url", "final-url", "resource", "etag", "last-modified", "length", "completed", "expected-checksum", "checksum"])
        #expect(text.contains("etag \"é%0Achecksum 00\"\n"))
        #expect(text.contains("url https://h/a b%2520c?x=%250A%0D%0Alength 5\n"))
        #expect(ResumeRecord.decode(record.encoded()) == .success(record))
    }

    @Test(arguments: ResumeRecordSamples.all)
    func everyTruncationIsTruncated(record: ResumeRecord) {
        let bytes = record.encoded()
        for length in 0..<bytes.count {
            let result = ResumeRecord.decode(Array(bytes[..<length]))
            #expect(result == .failure(.truncated), "prefix of \(length) of \(bytes.count) bytes: \(result)")
        }
    }

    @Test(arguments: ResumeRecordSamples.all)
    func everyDeletedByteFails(record: ResumeRecord) {
        let bytes = record.encoded()
        for index in bytes.indices {
            var damaged = bytes
            damaged.remove(at: index)
            #expect(throws: ResumeRecordError.self, "byte \(index) deleted") { try ResumeRecord.decode(damaged).get() }
        }
    }

    @Test(arguments: [0x01, 0x02, 0x20, 0x40, 0x80, 0xFF] as [UInt8])
    func everyFlippedByteFails(mask: UInt8) {
        for record in ResumeRecordSamples.all {
            let bytes = record.encoded()
            for index in bytes.indices {
                var damaged = bytes
                damaged[index] ^= mask
                #expect(throws: ResumeRecordError.self, "byte \(index) ^ \(mask)") { try ResumeRecord.decode(damaged).get() }
            }
        }
    }

    @Test(arguments: 0..<50)
    func randomBytesNeverDecode(seed: Int) {
        var generator = SplitMix64(seed: UInt64(seed))
        let count = Int.random(in: 0...300, using: &generator)
        var bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
        if seed.isMultiple(of: 2) { bytes = Array("haul-resume 2\n".utf8) + bytes }
        #expect(throws: ResumeRecordError.self) { try ResumeRecord.decode(bytes).get() }
    }

    @Test func otherVersionIsUnsupported() {
        #expect(ResumeRecord.decode(checksummed("haul-resume 3\nfuture stuff\n")) == .failure(.unsupportedVersion(3)))
        // Format 1 had no block hashes: its bytes could not be re-checked, so it is not read.
        #expect(ResumeRecord.decode(checksummed("haul-resume 1\nurl x\n")) == .failure(.unsupportedVersion(1)))
        #expect(ResumeRecord.decode(Array("haul-resume 7\n".utf8)) == .failure(.unsupportedVersion(7)))
    }

    static let validBody = String(decoding: ResumeRecordSamples.full.encoded().dropLast(74), as: UTF8.self)

    @Test func signedValidBodyDecodes() {
        #expect(ResumeRecord.decode(checksummed(Self.validBody)) == .success(ResumeRecordSamples.full))
    }

    /// A correctly checksummed body that breaks one rule of the format.
    struct RuleBreak: Sendable, CustomTestStringConvertible {
        let name: String
        let body: String
        var testDescription: String { name }

        init(_ name: String, replacing old: String, with new: String) {
            self.name = name
            body = ResumeRecordCodecTests.validBody.replacingOccurrences(of: old, with: new)
        }

        init(_ name: String, appending text: String) {
            self.name = name
            body = ResumeRecordCodecTests.validBody + text
        }
    }

    static let ruleBreaks: [RuleBreak] = [
        RuleBreak("unknown key", appending: "colour blue\n"),
        RuleBreak("duplicate key", replacing: "length 1048576\n", with: "length 1048576\nlength 1048576\n"),
        RuleBreak("missing length", replacing: "length 1048576\n", with: ""),
        RuleBreak("missing url", replacing: "url https://example.com/files/big.iso?X-Amz-Signature=REDACTED\n", with: ""),
        RuleBreak("keys out of order", replacing: "length 1048576\ncompleted 0-524287,600000-700000\n", with: "completed 0-524287,600000-700000\nlength 1048576\n"),
        RuleBreak("leading zero", replacing: "length 1048576", with: "length 01048576"),
        RuleBreak("sign", replacing: "length 1048576", with: "length +1048576"),
        RuleBreak("overflow", replacing: "length 1048576", with: "length 9223372036854775808"),
        RuleBreak("huge", replacing: "length 1048576", with: "length 99999999999999999999999"),
        RuleBreak("unsorted ranges", replacing: "0-524287,600000-700000", with: "600000-700000,0-524287"),
        RuleBreak("touching ranges", replacing: "0-524287,600000-700000", with: "0-524287,524288-700000"),
        RuleBreak("overlapping ranges", replacing: "0-524287,600000-700000", with: "0-600000,600000-700000"),
        RuleBreak("reversed range", replacing: "600000-700000", with: "700000-600000"),
        RuleBreak("range past the end", replacing: "600000-700000", with: "600000-1048576"),
        RuleBreak("empty range item", replacing: "0-524287,", with: "0-524287,,"),
        RuleBreak("trailing space", replacing: "completed 0-524287,600000-700000", with: "completed 0-524287,600000-700000 "),
        RuleBreak("weak etag", replacing: "etag \"abc-123\"", with: "etag W/\"abc-123\""),
        RuleBreak("bad escape", replacing: "etag \"abc-123\"", with: "etag \"abc%41\""),
        RuleBreak("lowercase escape", replacing: "etag \"abc-123\"", with: "etag \"abc%0a\""),
        RuleBreak("raw carriage return", replacing: "etag \"abc-123\"", with: "etag \"abc\r\""),
        RuleBreak("short resource", replacing: ResumeRecordSamples.key, with: "abc"),
        RuleBreak("uppercase resource", replacing: ResumeRecordSamples.key, with: ResumeRecordSamples.key.uppercased()),
        RuleBreak("empty line", appending: "\n"),
        RuleBreak("version with leading zero", replacing: "haul-resume 2", with: "haul-resume 02"),
        RuleBreak("block hash across a block boundary", replacing: "0-524287:", with: "0-4194304:"),
        RuleBreak("block hash past the end", replacing: "600000-700000:", with: "600000-1048576:"),
        RuleBreak("block hashes out of order", replacing: "0-524287:", with: "650000-660000:"),
        RuleBreak("short block hash", replacing: ":000000ff", with: ":00ff"),
        RuleBreak("uppercase block hash", replacing: ":abab0001", with: ":ABAB0001"),
        RuleBreak("verified bytes it does not claim", replacing: "verified-pieces 0-524287", with: "verified-pieces 0-600000"),
        RuleBreak("verified range past the end", replacing: "verified-pieces 0-524287", with: "verified-pieces 0-1048576"),
    ]

    @Test("a correctly checksummed record that breaks a rule is corrupt", arguments: ruleBreaks)
    func ruleBreakIsCorrupt(rule: RuleBreak) {
        #expect(rule.body != Self.validBody, "\(rule.name): the replacement did not apply")
        let result = ResumeRecord.decode(checksummed(rule.body))
        guard case .failure(.corrupt) = result else {
            Issue.record("\(rule.name): expected corrupt, got \(result)")
            return
        }
    }

    @Test func invalidUTF8IsCorrupt() {
        var body = Array(Self.validBody.utf8)
        body.insert(0xC3, at: body.firstIndex(of: UInt8(ascii: "\""))! + 1)   // lone lead byte in the ETag
        let bytes = body + Array("checksum \(SHA256.hex(body))\n".utf8)
        guard case .failure(.corrupt) = ResumeRecord.decode(bytes) else {
            Issue.record("invalid UTF-8 accepted")
            return
        }
    }

    @Test func damagedTrailerIsCaught() {
        let bytes = ResumeRecordSamples.full.encoded()
        #expect(ResumeRecord.decode(bytes + [UInt8(ascii: "\n")]) != .success(ResumeRecordSamples.full))
        #expect(ResumeRecord.decode(bytes + Array("x\n".utf8)) == .failure(.corrupt("there is text after the checksum line")))
        var wrong = bytes
        wrong[wrong.count - 2] = wrong[wrong.count - 2] == UInt8(ascii: "0") ? UInt8(ascii: "1") : UInt8(ascii: "0")
        #expect(ResumeRecord.decode(wrong) == .failure(.corrupt("its checksum does not match its content")))
        #expect(ResumeRecord.decode(Array("GIF89a".utf8)) == .failure(.corrupt("it does not start with 'haul-resume'")))
    }

    @Test(arguments: [
        ("\"abc\"", "\"abc\""),
        ("  \"abc\"\t", "\"abc\""),
        ("\"\"", "\"\""),
        ("\"é!#~\"", "\"é!#~\""),
        ("W/\"abc\"", nil),
        ("w/\"abc\"", nil),
        ("abc", nil),
        ("\"abc", nil),
        ("\"", nil),
        ("", nil),
        ("\"a\"b\"", nil),
        ("\"a b\"", nil),
        ("\"a\nb\"", nil),
        ("\"a\u{7F}\"", nil),
    ] as [(String, String?)])
    func strongETag(header: String, expected: String?) {
        #expect(ResumeRecord.strongETag(header) == expected)
    }

    @Test func strongETagOfNoHeaderIsNil() {
        #expect(ResumeRecord.strongETag(nil) == nil)
    }

    @Test func resourceKeyIgnoresQueryAndUserinfo() throws {
        let signed1 = try HTTPURL.parse("https://example.com/files/big.iso?X-Amz-Signature=aaa&X-Amz-Date=1")
        let signed2 = try HTTPURL.parse("https://alice:pw@EXAMPLE.com:443/files/big.iso?X-Amz-Signature=bbb")
        #expect(ResumeRecord.resourceKey(for: signed1) == ResumeRecordSamples.key)
        #expect(ResumeRecord.resourceKey(for: signed2) == ResumeRecordSamples.key)
        for other in ["https://example.com/files/other.iso", "http://example.com/files/big.iso",
                      "https://example.com:8443/files/big.iso", "https://example.org/files/big.iso"] {
            #expect(try ResumeRecord.resourceKey(for: HTTPURL.parse(other)) != ResumeRecordSamples.key, "\(other)")
        }
        #expect(try ResumeRecord.resourceKey(for: HTTPURL.parse("http://[::1]:8080/x")) == SHA256.hex(Array("http://[::1]:8080/x".utf8)))
    }

    /// A checkpoint after the first one checks only the completed ranges and block hashes, on
    /// their values (`progressProblem`): it must refuse exactly what reading the record back
    /// would refuse. Random ranges and pieces, some out of the file, crossing a 4 MiB block,
    /// overlapping or out of order.
    @Test("the checkpoint's in-memory check agrees with reading the record back", arguments: 0..<20)
    func progressCheckAgreesWithDecode(seed: Int) {
        var random = SplitMix64(seed: UInt64(seed))
        let block = BlockHash.blockSize
        var outcomes = (kept: 0, refused: 0)
        for _ in 0..<200 {
            let length = Int64.random(in: 1...(3 * block), using: &random)
            var ranges: [Range<Int64>] = []
            for _ in 0..<Int.random(in: 0...4, using: &random) {
                let start = Int64.random(in: 0...(length + 8), using: &random)
                ranges.append(start..<(start + Int64.random(in: 1...block, using: &random)))
            }
            var hashes: [BlockHash] = []
            var at: Int64 = 0
            for _ in 0..<Int.random(in: 0...5, using: &random) {
                let start = Bool.random(using: &random) ? at : Int64.random(in: 0...length, using: &random)
                let size = Bool.random(using: &random) ? Int64.random(in: 1...4096, using: &random) : Int64.random(in: 1...block, using: &random)
                hashes.append(BlockHash(range: start..<(start + size), crc32c: UInt32.random(in: 0...UInt32.max, using: &random)))
                at = start + size + Int64.random(in: 0...2, using: &random)
            }
            let record = Self.sample(length: length, completed: ranges, hashes: hashes)
            let readBack: Bool
            if case .success = ResumeRecord.decode(record.encoded()) { readBack = true } else { readBack = false }
            if readBack { outcomes.kept += 1 } else { outcomes.refused += 1 }
            #expect((record.progressProblem() == nil) == readBack,
                    "length \(length), completed \(record.completed.ranges), hashes \(hashes.map(\.range)): \(record.progressProblem() ?? "no problem")")
        }
        #expect(outcomes.kept > 0 && outcomes.refused > 0, "only one outcome was tried: \(outcomes)")
    }

    /// The full sample with other progress: a length, completed ranges and block hashes.
    static func sample(length: Int64, completed: [Range<Int64>], hashes: [BlockHash]) -> ResumeRecord {
        let full = ResumeRecordSamples.full
        return ResumeRecord(redactedURL: full.redactedURL, redactedFinalURL: full.redactedFinalURL,
                            resourceKey: full.resourceKey, etag: full.etag, lastModified: full.lastModified,
                            totalLength: length, completed: ByteRangeSet(completed), expectedChecksum: full.expectedChecksum,
                            serverDigest: full.serverDigest, blockHashes: hashes)
    }

    /// The edges the random records reach only by chance, each held to what decoding says.
    static let progressEdges: [(length: Int64, completed: [Range<Int64>], hashes: [Range<Int64>])] = {
        let block = BlockHash.blockSize
        return [
            (0, [], []),
            (0, [0..<1], []),
            (100, [0..<100], []),
            (100, [0..<101], []),
            (100, [0..<10, 20..<30], [0..<10, 20..<30]),
            (100, [], [0..<100]),
            (100, [], [0..<101]),
            (100, [], [50..<50]),
            (100, [], [-1..<10]),
            (3 * block, [], [0..<block]),
            (3 * block, [], [0..<(block + 1)]),
            (3 * block, [], [(block - 1)..<(block + 1)]),
            (3 * block, [], [0..<10, 10..<20]),
            (3 * block, [], [0..<10, 9..<20]),
            (3 * block, [], [20..<30, 0..<10]),
            (Int64.max, [(Int64.max - 1)..<Int64.max], [(Int64.max - 1)..<Int64.max]),
        ]
    }()

    @Test("the checkpoint's in-memory check agrees with reading the record back at the edges",
          arguments: progressEdges.indices)
    func progressCheckEdges(index: Int) {
        let edge = Self.progressEdges[index]
        let record = Self.sample(length: edge.length, completed: edge.completed,
                                 hashes: edge.hashes.map { BlockHash(range: $0, crc32c: 1) })
        let readBack: Bool
        if case .success = ResumeRecord.decode(record.encoded()) { readBack = true } else { readBack = false }
        #expect((record.progressProblem() == nil) == readBack, "\(edge): \(record.progressProblem() ?? "no problem")")
    }

    /// A later checkpoint's record that breaks a rule is not written.
    @Test func aLaterCheckpointWithBadProgressIsNotWritten() throws {
        try withTemporaryDirectory { dir in
            let folder = try DestinationFolder(path: dir.path)
            let bad = Self.sample(length: 100, completed: [0..<50], hashes: [BlockHash(range: 90..<101, crc32c: 1)])
            do throws(DownloadError) {
                try bad.save(for: "f.bin", in: folder, fieldsChecked: true)
                Issue.record("a record with a block hash past its length was written")
            } catch {
                #expect(error.code == .internalError)
            }
            #expect(listFiles(dir).isEmpty)
            let good = Self.sample(length: 100, completed: [0..<50], hashes: [BlockHash(range: 0..<50, crc32c: 1)])
            try good.save(for: "f.bin", in: folder, fieldsChecked: true)
            #expect(listFiles(dir) == ["f.bin.resume"])
        }
    }

    @Test func factoryRedactsAndDropsWeakETags() throws {
        let url = try HTTPURL.parse("https://bob:secret@example.com/files/big.iso?X-Amz-Signature=abc")
        let record = ResumeRecord(url: url, finalURL: url, etagHeader: "W/\"v1\"", lastModified: "d", totalLength: 10)
        #expect(record.etag == nil)
        #expect(record.ifRangeValidator == "d")
        #expect(!record.redactedURL.contains("secret") && !record.redactedURL.contains("abc"))
        #expect(record.resourceKey == ResumeRecordSamples.key)
        let strong = ResumeRecord(url: url, finalURL: url, etagHeader: " \"v1\"", lastModified: "d", totalLength: 10)
        #expect(strong.etag == "\"v1\"")
        #expect(strong.ifRangeValidator == "\"v1\"")
        #expect(ResumeRecord.decode(strong.encoded()) == .success(strong))
    }
}
