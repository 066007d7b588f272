import HaulHTTP
import HaulCore
import HaulCrypto
/// A digest of the whole file that the server sent without being asked, to verify the
/// download against.
///
/// Read from `Repr-Digest` or `Content-Digest` (RFC 9530, Structured Field dictionaries such as
/// `sha-256=:base64:`) or the older `Digest` (RFC 3230, `SHA-256=base64`). Only `sha-256` and
/// `sha-512` are used; other algorithms (`md5`, `sha`, `unixsum`, ...) are ignored, and so is a
/// field that does not parse or a value of the wrong length.
///
/// Which fields describe the whole file depends on the status:
/// - `Repr-Digest` is computed over the selected representation, so it is valid on a 200 and
///   on a 206 alike (RFC 9530 section 3).
/// - `Content-Digest` is computed over the message content: on a 206 that is the partial body,
///   not the file, so it is used only on a 200.
/// - `Digest` is ignored on a 206: RFC 3230 defines it over the whole instance, but servers
///   disagreed about ranges (the ambiguity RFC 9530 section 1.3 gives for replacing it), and a
///   false mismatch would fail a good download.
///
/// When several usable digests are present the strongest algorithm wins (sha-512 over
/// sha-256); between fields with the same algorithm `Repr-Digest` is preferred, then
/// `Content-Digest`, then `Digest`.
package struct ServerDigest: Sendable, Equatable {
    /// The response field a digest came from.
    enum Field: String, Sendable, CaseIterable {
        /// `Repr-Digest` (RFC 9530).
        case reprDigest = "Repr-Digest"
        /// `Content-Digest` (RFC 9530).
        case contentDigest = "Content-Digest"
        /// `Digest` (RFC 3230, obsoleted by RFC 9530).
        case digest = "Digest"
    }

    /// The algorithm and the expected bytes of the whole file.
    let checksum: Checksum
    /// Where the digest came from (for messages: "the server's Repr-Digest does not match").
    let field: Field

    /// The strongest usable digest of the whole file in a response head, or `nil`.
    ///
    /// - Parameter head: a 200 or 206 response head; other statuses have no file digest.
    init?(head: ResponseHead) {
        self.init(status: head.status, headers: head.headers)
    }

    /// The strongest usable digest of the whole file, or `nil`.
    ///
    /// - Parameters:
    ///   - status: the response status (200 or 206; anything else gives `nil`).
    ///   - headers: the response fields.
    package init?(status: Int, headers: HTTPHeaders) {
        guard status == 200 || status == 206 else { return nil }
        var best: ServerDigest?
        for field in Field.allCases where status == 200 || field == .reprDigest {
            let lines = headers.values(for: field.rawValue)
            guard !lines.isEmpty else { continue }
            let text = lines.joined(separator: ", ")
            let found = field == .digest ? Self.legacyDigests(text) : Self.structuredDigests(text)
            for checksum in found where best == nil || Self.strength(checksum.algorithm) > Self.strength(best!.checksum.algorithm) {
                best = ServerDigest(checksum: checksum, field: field)
            }
        }
        guard let best else { return nil }
        self = best
    }

    private init(checksum: Checksum, field: Field) {
        self.checksum = checksum
        self.field = field
    }

    /// The algorithms used, by their names in the HTTP Digest Algorithm Values registry.
    private static let algorithms: [(name: String, algorithm: ChecksumAlgorithm)] = [
        ("sha-512", .sha512), ("sha-256", .sha256),
    ]

    private static func strength(_ algorithm: ChecksumAlgorithm) -> Int {
        algorithm == .sha512 ? 2 : 1
    }

    /// The usable digests of an RFC 9530 dictionary, strongest first.
    private static func structuredDigests(_ text: String) -> [Checksum] {
        guard let dictionary = StructuredFieldDictionary(parsing: text) else { return [] }
        return algorithms.compactMap { entry in
            guard case .bytes(let bytes)? = dictionary[entry.name] else { return nil }
            return try? Checksum(algorithm: entry.algorithm, expected: bytes)
        }
    }

    /// The usable digests of an RFC 3230 `Digest` list (`SHA-256=base64, md5=...`), strongest
    /// first. Algorithm names are case-insensitive; a malformed member is skipped.
    private static func legacyDigests(_ text: String) -> [Checksum] {
        var values: [String: [UInt8]] = [:]
        for member in text.split(separator: ",") {
            let trimmed = member.trimmingSpaces
            guard let equals = trimmed.firstIndex(of: "=") else { continue }
            let name = trimmed[..<equals].lowercased()
            guard let bytes = Base64.decode(trimmed[trimmed.index(after: equals)...].utf8) else { continue }
            values[name] = bytes
        }
        return algorithms.compactMap { entry in
            guard let bytes = values[entry.name] else { return nil }
            return try? Checksum(algorithm: entry.algorithm, expected: bytes)
        }
    }
}

extension Substring {
    /// Without leading and trailing spaces and tabs.
    fileprivate var trimmingSpaces: Substring {
        var result = self
        while let first = result.first, first == " " || first == "\t" { result.removeFirst() }
        while let last = result.last, last == " " || last == "\t" { result.removeLast() }
        return result
    }
}
