import HaulCrypto

/// A Metalink 4 document (RFC 5854), read and checked: the files it describes, each with the
/// HTTP and HTTPS sources to fetch it from and the hashes to verify it with.
///
/// ``parse(_:)`` trusts nothing in the document: the XML is read by a small reader that refuses
/// DTDs and undefined entities and bounds size, depth and text; every file name is a relative
/// path checked by Unicode scalars; sizes, piece counts and digest lengths are checked against
/// each other. A file that fails a check is skipped with a line in ``warnings``; the document
/// is refused only when it is not well-formed Metalink 4 or leaves no usable file.
public struct Metalink: Sendable, Equatable {
    /// The usable files, in document order, each name unique.
    public var files: [File]
    /// One line for each thing skipped or ignored (a file, a URL, a metaurl, an unknown hash
    /// type), with document text redacted to its safe scalars; at most ``Limits/warnings`` lines.
    public var warnings: [String]

    /// Creates a value (the parser makes them; this is for callers' tests).
    public init(files: [File], warnings: [String] = []) {
        self.files = files
        self.warnings = warnings
    }

    /// The namespace of Metalink 4 elements (RFC 5854 section 1.2).
    public static let namespace = "urn:ietf:params:xml:ns:metalink"

    /// Reads and checks a Metalink 4 document.
    ///
    /// - Parameter bytes: the document, UTF-8 XML (a `.meta4` file or an
    ///   `application/metalink4+xml` body), at most ``Limits/documentBytes``.
    /// - Returns: the usable files and the warnings for what was skipped.
    /// - Throws: ``MetalinkError`` with code `tooLarge`, `malformed`, `refused`,
    ///   `limitExceeded` (also for more than ``Limits/files`` files), `notMetalink` or
    ///   `noUsableFile`.
    public static func parse(_ bytes: some Collection<UInt8>) throws(MetalinkError) -> Metalink {
        guard bytes.count <= Limits.documentBytes else {
            throw MetalinkError(.tooLarge, "the document is \(bytes.count) bytes, more than the \(Limits.documentBytes) read")
        }
        var reader = try XMLReader(Array(bytes))
        var builder = MetalinkBuilder()
        while let event = try reader.next() {
            try builder.handle(event)
        }
        return try builder.finish()
    }
}

extension Metalink {
    /// One file of the document: where it goes, how big it is, how to check it, where to get it.
    public struct File: Sendable, Equatable {
        /// The relative path to save it under, as the document gives it: not empty, not
        /// absolute, no empty, `.` or `..` component, no backslash, no control scalar.
        public var name: String
        /// Its length in bytes, when the document gives one.
        public var size: Int64?
        /// The strongest whole-file hash given (SHA-512, then SHA-256, SHA-1, MD5).
        public var hash: Hash?
        /// The strongest piece hashes given (SHA-512, then SHA-256, SHA-1, MD5), whose count
        /// matches ``size`` when it is known; when it is not, the count is unchecked (at most
        /// ``Limits/pieceCount``): check it against the length the server reports.
        public var pieces: Pieces?
        /// The HTTP and HTTPS sources, by priority (lowest number first, then those without one,
        /// each group in document order); never empty.
        public var urls: [Source]
        /// The document's `<description>`, trimmed: untrusted text, redact before showing.
        public var description: String?
        /// The document's `<version>`, trimmed: untrusted text.
        public var version: String?
        /// The document's `<identity>`, trimmed: untrusted text.
        public var identity: String?

        /// Creates a file (the parser makes them; this is for callers' tests).
        public init(name: String, size: Int64? = nil, hash: Hash? = nil, pieces: Pieces? = nil, urls: [Source],
                    description: String? = nil, version: String? = nil, identity: String? = nil) {
            self.name = name
            self.size = size
            self.hash = hash
            self.pieces = pieces
            self.urls = urls
            self.description = description
            self.version = version
            self.identity = identity
        }
    }

    /// A whole-file digest.
    public struct Hash: Sendable, Equatable {
        /// The function that made it.
        public var algorithm: ChecksumAlgorithm
        /// The raw digest, `algorithm.byteCount` bytes.
        public var digest: [UInt8]

        /// Creates a hash.
        public init(algorithm: ChecksumAlgorithm, digest: [UInt8]) {
            self.algorithm = algorithm
            self.digest = digest
        }
    }

    /// The digests of consecutive pieces of a file: piece `i` covers bytes
    /// `i * length ..< min((i + 1) * length, size)`.
    public struct Pieces: Sendable, Equatable {
        /// The length of each piece but the last, in bytes, more than zero.
        public var length: Int64
        /// The function that made the digests.
        public var algorithm: ChecksumAlgorithm
        /// One raw digest per piece, in order, each `algorithm.byteCount` bytes.
        public var digests: [[UInt8]]

        /// Creates piece hashes.
        public init(length: Int64, algorithm: ChecksumAlgorithm, digests: [[UInt8]]) {
            self.length = length
            self.algorithm = algorithm
            self.digests = digests
        }
    }

    /// One place to fetch a file from.
    public struct Source: Sendable, Equatable {
        /// An `http` or `https` URL, trimmed, with no space or control scalar; not yet parsed
        /// further (the engine's URL parser does that).
        public var url: String
        /// 1 (most preferred) to 999999, when the document gives a valid one.
        public var priority: Int?
        /// The server's country, an ISO 3166-1 alpha-2 code in lowercase, when given validly.
        public var location: String?

        /// Creates a source.
        public init(url: String, priority: Int? = nil, location: String? = nil) {
            self.url = url
            self.priority = priority
            self.location = location
        }
    }

    /// The bounds the parser holds every document to, whatever it declares.
    public enum Limits {
        /// The largest document read, in bytes (32 MiB).
        public static let documentBytes = 32 << 20
        /// The deepest nesting of elements (the root is depth 1).
        public static let depth = 32
        /// The most attributes on one element, namespace declarations included.
        public static let attributesPerElement = 32
        /// The most bytes of text directly inside one element, runs of only whitespace aside.
        public static let textBytesPerElement = 64 << 10
        /// The longest element or attribute name, in bytes.
        public static let nameBytes = 256
        /// The most piece hashes one file may have (256 GiB in pieces of 1 MiB).
        public static let pieceCount = 1 << 18
        /// The most lines kept in ``Metalink/warnings`` (a last line counts the others).
        public static let warnings = 64
        /// The most files one document may describe.
        public static let files = 1 << 16
        /// The most sources kept for one file (the others are skipped with a warning).
        public static let sourcesPerFile = 1024
        /// The longest file name, in bytes of UTF-8.
        public static let fileNameBytes = 4096
        /// The longest component of a file name, in bytes of UTF-8 (the usual `NAME_MAX`).
        public static let fileNameComponentBytes = 255
    }
}
