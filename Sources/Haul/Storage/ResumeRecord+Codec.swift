import HaulCrypto
/// The text form of a resume record.
///
/// ```
/// haul-resume 2
/// url https://host/path?X-Amz-Signature=REDACTED
/// final-url https://cdn.host/path
/// resource 3f2a…                      (64 hex digits)
/// etag "abc"                          (optional)
/// last-modified Tue, 01 Dec 2026 10:00:00 GMT   (optional)
/// length 1048576
/// completed 0-524287,600000-700000    (inclusive ends; just `completed` when empty)
/// expected-checksum sha256:…          (optional)
/// server-digest sha256=…              (optional)
/// block-hashes 0-4194303:<sha256 hex>,4194304-5000000:…   (optional; inclusive ends)
/// verified-pieces 0-262143            (optional; bytes of pieces that passed their checksum)
/// checksum <sha256 hex of every byte above this line>
/// ```
/// Each line is a key, then one space and the value (a line is the key alone when the value is
/// empty), then `\n`. In values `%`, CR and LF are written `%25`, `%0D` and `%0A`, so no
/// value can start a line of its own. Decoding accepts exactly what ``ResumeRecord/encoded()``
/// writes, nothing else.
extension ResumeRecord {
    private static let magic = "haul-resume"

    private enum Key: String, CaseIterable {
        case url, finalURL = "final-url", resource, etag, lastModified = "last-modified"
        case length, completed, expectedChecksum = "expected-checksum"
        case serverDigest = "server-digest", blockHashes = "block-hashes", verifiedPieces = "verified-pieces"

        var isRequired: Bool {
            switch self {
            case .etag, .lastModified, .expectedChecksum, .serverDigest, .blockHashes, .verifiedPieces: false
            default: true
            }
        }
    }

    /// The record as bytes, ready to be written to `NAME.resume`.
    ///
    /// - Returns: UTF-8 text ending with the checksum line and one `\n`.
    package func encoded() -> [UInt8] {
        var text = "\(Self.magic) \(Self.formatVersion)\n"
        func line(_ key: Key, _ value: String?) {
            guard let value else { return }
            text += value.isEmpty ? "\(key.rawValue)\n" : "\(key.rawValue) \(value)\n"
        }
        line(.url, Self.escape(redactedURL))
        line(.finalURL, Self.escape(redactedFinalURL))
        line(.resource, Self.escape(resourceKey))
        line(.etag, etag.map(Self.escape))
        line(.lastModified, lastModified.map(Self.escape))
        line(.length, String(totalLength))
        line(.completed, Self.text(of: completed))
        line(.expectedChecksum, expectedChecksum.map(Self.escape))
        line(.serverDigest, serverDigest.map(Self.escape))
        line(.blockHashes, blockHashes.isEmpty ? nil : BlockHash.encode(blockHashes))
        line(.verifiedPieces, verifiedPieces.ranges.isEmpty ? nil : Self.text(of: verifiedPieces))
        var bytes = Array(text.utf8)
        bytes += Array("checksum \(SHA256.hex(bytes))\n".utf8)
        return bytes
    }

    /// Reads a record from bytes, strictly.
    ///
    /// The first line must be `haul-resume 2`; the last line `checksum` with the SHA-256 of
    /// everything above it, followed by exactly one `\n`. Every required key appears once,
    /// optional ones at most once, in the order ``encoded()`` writes them, and no other key;
    /// numbers are plain digits that fit an `Int64`; ranges are sorted, separate (not even
    /// touching) and within the length; the ETag is not weak. Never traps, whatever the input.
    ///
    /// - Parameter bytes: the content of a record file.
    /// - Returns: the record; or `.truncated` when it ends early, `.unsupportedVersion` for
    ///   another format version, `.corrupt` with the reason for anything else.
    package static func decode(_ bytes: [UInt8]) -> Result<ResumeRecord, ResumeRecordError> {
        do throws(ResumeRecordError) {
            return .success(try decodeThrowing(bytes))
        } catch {
            return .failure(error)
        }
    }

    private static func decodeThrowing(_ bytes: [UInt8]) throws(ResumeRecordError) -> ResumeRecord {
        let headerEnd = try checkHeader(bytes)
        let lastLineStart = try checkTrailer(bytes, after: headerEnd)
        let values = try keyValues(bytes[(headerEnd + 1)..<lastLineStart])
        let record = try record(from: values)
        // Whatever got this far must be exactly what Haul writes (key order, empty values...).
        guard record.encoded() == bytes else { throw .corrupt("it is not in the form Haul writes") }
        return record
    }

    /// Header: `haul-resume N\n` with this format version. Returns the index of its newline.
    private static func checkHeader(_ bytes: [UInt8]) throws(ResumeRecordError) -> Int {
        let prefix = Array("\(magic) ".utf8)
        guard bytes.starts(with: prefix) else {
            throw prefix.starts(with: bytes) ? .truncated : .corrupt("it does not start with '\(magic)'")
        }
        guard let headerEnd = bytes.firstIndex(of: UInt8(ascii: "\n")) else { throw .truncated }
        guard let version = number(bytes[prefix.count..<headerEnd]) else {
            throw .corrupt("the format version is not a number")
        }
        guard version == Int64(formatVersion) else {
            throw .unsupportedVersion(version > Int64(Int.max) ? Int.max : Int(version))
        }
        return headerEnd
    }

    /// Trailer: `checksum HEX\n`, last, over every byte above it. Returns where its line starts.
    private static func checkTrailer(_ bytes: [UInt8], after headerEnd: Int) throws(ResumeRecordError) -> Int {
        let newline = UInt8(ascii: "\n")
        guard bytes.last == newline else { throw .truncated }
        let lastLineStart = bytes[..<(bytes.count - 1)].lastIndex(of: newline).map { $0 + 1 } ?? 0
        let checksumPrefix = Array("checksum ".utf8)
        guard lastLineStart > headerEnd, bytes[lastLineStart...].starts(with: checksumPrefix) else {
            let lines = bytes[(headerEnd + 1)...].split(separator: newline)
            if lines.contains(where: { $0.starts(with: checksumPrefix) }) {
                throw .corrupt("there is text after the checksum line")
            }
            throw .truncated
        }
        let storedChecksum = bytes[(lastLineStart + checksumPrefix.count)..<(bytes.count - 1)]
        guard isLowercaseHexDigest(storedChecksum) else { throw .corrupt("the checksum line is malformed") }
        guard SHA256.hex(Array(bytes[..<lastLineStart])).utf8.elementsEqual(storedChecksum) else {
            throw .corrupt("its checksum does not match its content")
        }
        return lastLineStart
    }

    /// Body: `key value` lines, each key known and once, every required key present.
    private static func keyValues(_ body: ArraySlice<UInt8>) throws(ResumeRecordError) -> [Key: String] {
        var values: [Key: String] = [:]
        for line in body.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).dropLast() {
            let space = line.firstIndex(of: UInt8(ascii: " ")) ?? line.endIndex
            let keyText = String(decoding: line[..<space], as: UTF8.self)
            guard let key = Key(rawValue: keyText) else {
                throw .corrupt(keyText.isEmpty ? "it has an empty line" : "it has an unknown key")
            }
            guard values[key] == nil else { throw .corrupt("the key '\(key.rawValue)' appears twice") }
            values[key] = try unescape(space == line.endIndex ? line[space...] : line[(space + 1)...], key: key)
        }
        for key in Key.allCases where key.isRequired && values[key] == nil {
            throw .corrupt("the key '\(key.rawValue)' is missing")
        }
        return values
    }

    /// The record the values describe, each checked.
    private static func record(from values: [Key: String]) throws(ResumeRecordError) -> ResumeRecord {
        let resource = values[.resource]!
        guard isLowercaseHexDigest(resource.utf8[...]) else { throw .corrupt("the resource key is malformed") }
        guard let length = number(Array(values[.length]!.utf8)[...]) else { throw .corrupt("the length is not a number") }
        let completed = try ranges(values[.completed]!, length: length)
        if let etag = values[.etag], etag.hasPrefix("W/") { throw .corrupt("its ETag is weak") }
        guard let blocks = BlockHash.decode(values[.blockHashes] ?? "", length: length) else {
            throw .corrupt("a block hash is malformed")
        }
        let verified = try ranges(values[.verifiedPieces] ?? "", length: length)
        guard verified.ranges.allSatisfy(completed.contains) else { throw .corrupt("it lists verified bytes it does not claim") }
        return ResumeRecord(
            redactedURL: values[.url]!, redactedFinalURL: values[.finalURL]!, resourceKey: resource,
            etag: values[.etag], lastModified: values[.lastModified], totalLength: length,
            completed: completed, expectedChecksum: values[.expectedChecksum],
            serverDigest: values[.serverDigest], blockHashes: blocks, verifiedPieces: verified
        )
    }

    /// `ranges` as `1-5,9-9` (inclusive ends).
    private static func text(of ranges: ByteRangeSet) -> String {
        ranges.ranges.map { "\($0.lowerBound)-\($0.upperBound - 1)" }.joined(separator: ",")
    }

    /// What ``decode(_:)`` would reject in the completed ranges or the block hashes of this
    /// record, checked on the values instead of their text; `nil` when they are fine. (Their
    /// encodings are plain numbers: only the values can be wrong.)
    func progressProblem() -> String? {
        var end: Int64 = -1
        for range in completed.ranges {
            guard range.lowerBound >= 0, !range.isEmpty, range.upperBound <= totalLength else {
                return "a completed range lies outside the file"
            }
            guard range.lowerBound > end else { return "the completed ranges are not sorted and separate" }
            end = range.upperBound
        }
        var previousEnd: Int64 = 0
        for hash in blockHashes {
            guard !hash.range.isEmpty else { return "a block hash is malformed" }
            let first = hash.range.lowerBound, last = hash.range.upperBound - 1
            guard first >= 0, last < totalLength, first / BlockHash.blockSize == last / BlockHash.blockSize,
                  first >= previousEnd else { return "a block hash is malformed" }
            previousEnd = hash.range.upperBound
        }
        guard verifiedPieces.ranges.allSatisfy(completed.contains) else { return "it lists verified bytes it does not claim" }
        return nil
    }

    /// `1-5,9-9` (inclusive ends) into a set, checking order, separation and bounds.
    private static func ranges(_ text: String, length: Int64) throws(ResumeRecordError) -> ByteRangeSet {
        guard !text.isEmpty else { return ByteRangeSet() }
        var result: [Range<Int64>] = []
        for item in Array(text.utf8).split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false) {
            let parts = item.split(separator: UInt8(ascii: "-"), omittingEmptySubsequences: false)
            guard parts.count == 2, let first = number(parts[0]), let last = number(parts[1]) else {
                throw .corrupt("a completed range is malformed")
            }
            guard first <= last, last < length else { throw .corrupt("a completed range lies outside the file") }
            if let previous = result.last, first <= previous.upperBound {
                throw .corrupt("the completed ranges are not sorted and separate")
            }
            result.append(first..<(last + 1))
        }
        return ByteRangeSet(result)
    }

    /// A non-negative decimal number: digits only, no leading zero, no overflow.
    private static func number(_ digits: ArraySlice<UInt8>) -> Int64? {
        guard !digits.isEmpty, digits.count == 1 || digits.first != UInt8(ascii: "0") else { return nil }
        var value: Int64 = 0
        for digit in digits {
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(digit) else { return nil }
            let (times10, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times10.addingReportingOverflow(Int64(digit - UInt8(ascii: "0")))
            guard !overflow1, !overflow2 else { return nil }
            value = sum
        }
        return value
    }

    private static func isLowercaseHexDigest<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> Bool {
        bytes.count == 2 * SHA256.byteCount
            && bytes.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0) }
    }

    /// `%` -> `%25`, CR -> `%0D`, LF -> `%0A`.
    private static func escape(_ value: String) -> String {
        guard value.utf8.contains(where: { $0 == UInt8(ascii: "%") || $0 == 0x0D || $0 == 0x0A }) else { return value }
        var bytes: [UInt8] = []
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "%"): bytes += Array("%25".utf8)
            case 0x0D: bytes += Array("%0D".utf8)
            case 0x0A: bytes += Array("%0A".utf8)
            default: bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The inverse of ``escape(_:)``, rejecting raw CR, other escapes and invalid UTF-8.
    private static func unescape(_ text: ArraySlice<UInt8>, key: Key) throws(ResumeRecordError) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.count)
        var index = text.startIndex
        while index < text.endIndex {
            let byte = text[index]
            if byte == 0x0D { throw .corrupt("the value of '\(key.rawValue)' holds a raw carriage return") }
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                index += 1
                continue
            }
            let escape = text[index..<min(index + 3, text.endIndex)]
            switch String(decoding: escape, as: UTF8.self) {
            case "%25": bytes.append(UInt8(ascii: "%"))
            case "%0D": bytes.append(0x0D)
            case "%0A": bytes.append(0x0A)
            default: throw .corrupt("the value of '\(key.rawValue)' holds an unknown %-escape")
            }
            index += 3
        }
        guard let value = String(validating: bytes, as: UTF8.self) else {
            throw .corrupt("the value of '\(key.rawValue)' is not valid UTF-8")
        }
        return value
    }
}
