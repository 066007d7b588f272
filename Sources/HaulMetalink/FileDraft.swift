import HaulCore
import HaulCrypto

/// Why a `<file>` is skipped.
struct FileRefusal: Error {
    var reason: String
}

/// A `<file>` as it is read: its fields checked as they end, the file as a whole at its end tag.
struct FileDraft {
    /// The `name` attribute, unchecked.
    let name: String?
    /// The name redacted to its safe scalars, for messages.
    let shownName: String
    var size: Int64?
    var sizeSeen = false
    var hashes: [ChecksumAlgorithm: [UInt8]] = [:]
    /// The complete `<pieces>` of known types.
    var pieces: [Metalink.Pieces] = []
    /// The `<pieces>` being read; `algorithm` is `nil` when its hashes are not kept.
    var openPieces: (algorithm: ChecksumAlgorithm?, length: Int64, digests: [[UInt8]])?
    var sources: [Metalink.Source] = []
    var description: String?
    var version: String?
    var identity: String?
    /// The first reason found to skip the file.
    var refusal: String?
    /// What was ignored without skipping the file.
    var notes = Warnings()

    /// A draft for a `<file>` with the `name` attribute `name`.
    init(name: String?) {
        self.name = name
        shownName = Redaction.safe(name ?? "")
    }

    /// Records a reason to skip the file (the first one is kept).
    mutating func refuse(_ reason: String) {
        if refusal == nil { refusal = reason }
    }

    /// Takes the text of a field at its end tag.
    mutating func take(_ field: MetalinkBuilder.Field, text: String) {
        switch field {
        case .size: takeSize(Self.trimmed(text))
        case .identity: identity = Self.trimmed(text)
        case .version: version = Self.trimmed(text)
        case .description: description = Self.trimmed(text)
        case .hash(let type): takeHash(type: type, text: Self.trimmed(text))
        case .pieceHash: takePieceHash(Self.trimmed(text))
        case .url(let priority, let location):
            guard sources.count < Metalink.Limits.sourcesPerFile else {
                return notes.add("a URL beyond the first \(Metalink.Limits.sourcesPerFile) skipped")
            }
            if let source = Self.source(Self.trimmed(text), priority: priority, location: location, notes: &notes) {
                sources.append(source)
            }
        case .metaurl(let mediatype):
            notes.add("a metaurl (\(Redaction.safe(mediatype ?? "no mediatype", limit: 40))) ignored: only http and https URLs are used")
        }
    }

    /// `<size>`: a whole number of bytes that fits in `Int64`, given once.
    mutating func takeSize(_ text: String) {
        guard !sizeSeen else { return refuse("it has more than one <size>") }
        sizeSeen = true
        if text.hasPrefix("-") { return refuse("its size is negative") }
        guard !text.isEmpty, text.utf8.allSatisfy(Self.isDigit) else {
            return refuse("its size '\(Redaction.safe(text, limit: 40))' is not a whole number of bytes")
        }
        guard let value = Int64(text) else { return refuse("its size \(Redaction.safe(text, limit: 40)) is too large") }
        size = value
    }

    /// `<hash type="...">`: kept when the type is known; a digest of the wrong length skips the
    /// file, as do two different digests of one type.
    mutating func takeHash(type: String?, text: String) {
        guard let type else { return notes.add("a <hash> without a type ignored") }
        guard let algorithm = Self.algorithm(named: type) else {
            return notes.add("a hash of the unknown type '\(Redaction.safe(type, limit: 40))' ignored")
        }
        guard let digest = Self.digest(text, algorithm) else {
            return refuse("its \(Self.name(of: algorithm)) hash is not \(algorithm.byteCount * 2) hex digits")
        }
        if let earlier = hashes[algorithm], earlier != digest {
            return refuse("it has two different \(Self.name(of: algorithm)) hashes")
        }
        hashes[algorithm] = digest
    }

    /// Trims XML whitespace (space, tab, line ends) from both ends of `text`.
    static func trimmed(_ text: String) -> String {
        guard let first = text.utf8.firstIndex(where: { !XMLReader.isWhitespace($0) }),
              let last = text.utf8.lastIndex(where: { !XMLReader.isWhitespace($0) }) else { return "" }
        return String(decoding: text.utf8[first...last], as: UTF8.self)
    }

    /// Whether `byte` is an ASCII digit.
    static func isDigit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }

    /// The algorithm of an IANA hash function name (RFC 5854 section 4.2.4), case-insensitive.
    static func algorithm(named name: String) -> ChecksumAlgorithm? {
        switch asciiLowercased(name) {
        case "sha-512": .sha512
        case "sha-256": .sha256
        case "sha-1": .sha1
        case "md5": .md5
        default: nil
        }
    }

    /// The IANA name of `algorithm`.
    static func name(of algorithm: ChecksumAlgorithm) -> String {
        switch algorithm {
        case .sha512: "sha-512"
        case .sha256: "sha-256"
        case .sha1: "sha-1"
        case .md5: "md5"
        }
    }

    /// The strongest first.
    static let strength: [ChecksumAlgorithm] = [.sha512, .sha256, .sha1, .md5]

    /// The digest spelled by `text` (hex in either case), or `nil` unless it is exactly
    /// `algorithm.byteCount` bytes.
    static func digest(_ text: String, _ algorithm: ChecksumAlgorithm) -> [UInt8]? {
        guard text.utf8.count == algorithm.byteCount * 2 else { return nil }
        return Hex.decode(text)
    }
}
