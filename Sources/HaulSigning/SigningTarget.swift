import HaulCore
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Haul
import HaulHTTP

/// The parts of a URL that a query-string signature covers, decoded, plus the canonical
/// encoding both AWS and OSS use (RFC 3986: everything but `A-Z a-z 0-9 - . _ ~` as `%XX`).
struct SigningTarget: Sendable {
    /// `http` or `https`.
    var scheme: String
    /// The host, lowercase.
    var host: String
    /// The explicit port, `nil` for the scheme's default.
    var port: Int?
    /// The decoded path, starting with `/`.
    var path: String
    /// The decoded query parameters, in URL order.
    var query: [(name: String, value: String)]

    /// The `Host` header value: the port only when it is not the scheme's default.
    var hostHeader: String {
        let name = host.contains(":") ? "[\(host)]" : host
        return port.map { "\(name):\($0)" } ?? name
    }

    /// Splits an `http`/`https` URL into its signed parts.
    ///
    /// - Throws: `invalidURL` / `unsupportedScheme` as ``HTTPURL/parse(_:)`` does.
    init(url: URL) throws(DownloadError) {
        let parsed = try mappingHTTPErrors { () throws(HTTPClientError) in try HTTPURL.parse(url.absoluteString) }
        scheme = parsed.scheme.rawValue
        host = parsed.host
        port = parsed.port == parsed.scheme.defaultPort ? nil : parsed.port
        path = Self.percentDecoded(parsed.path)
        query = (parsed.query ?? "").split(separator: "&", omittingEmptySubsequences: true).map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            return (Self.percentDecoded(parts[0]), parts.count > 1 ? Self.percentDecoded(parts[1]) : "")
        }
    }

    /// A target from its parts.
    init(scheme: String, host: String, port: Int?, path: String, query: [(name: String, value: String)]) {
        self.scheme = scheme
        self.host = host
        self.port = port
        self.path = path
        self.query = query
    }

    /// The URL for this target with `query` (already canonically encoded, in order) as its query.
    func url(encodedQuery: [(name: String, value: String)]) throws(DownloadError) -> URL {
        let queryText = encodedQuery.map { "\($0.name)=\($0.value)" }.joined(separator: "&")
        let text = "\(scheme)://\(hostHeader)\(Self.encode(path, keepingSlashes: true))?\(queryText)"
        guard let url = URL(string: text) else {
            throw DownloadError(.invalidURL, "cannot build a signed URL for \(scheme)://\(hostHeader)")
        }
        return url
    }

    /// RFC 3986 encoding of `text` as UTF-8: unreserved characters stay, everything else is `%XX`
    /// in uppercase hex; `/` stays too when `keepingSlashes` (object key paths).
    static func encode(_ text: String, keepingSlashes: Bool = false) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.append(byte)
            case UInt8(ascii: "/") where keepingSlashes:
                out.append(byte)
            default:
                out += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]]
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// `%XX` sequences replaced by their bytes (invalid ones kept as they are); `+` stays `+`.
    static func percentDecoded(_ text: some StringProtocol) -> String {
        String(decoding: PercentDecoding.lenient(Array(text.utf8)).bytes, as: UTF8.self)
    }
}

/// A UTC instant in the formats the signatures use.
struct SigningTime: Sendable {
    /// `YYYYMMDD'T'HHMMSS'Z'` (ISO 8601 basic), e.g. `20130524T000000Z`.
    let timestamp: String
    /// `YYYYMMDD`, the credential scope date.
    let day: String
    /// Whole seconds since 1970 (OSS V1 `Expires` counts from here).
    let secondsSince1970: Int64

    /// The instant `date`, truncated to the second.
    init(_ date: Date) {
        let seconds = Int64(date.timeIntervalSince1970.rounded(.down))
        secondsSince1970 = seconds
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = seconds - days * 86_400
        let date = CivilDate(daysSince1970: days)
        let (year, month, dayOfMonth) = (date.year, date.month, date.day)
        func two(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }
        day = "\(year)\(two(month))\(two(dayOfMonth))"
        timestamp = "\(day)T\(two(secondOfDay / 3600))\(two(secondOfDay / 60 % 60))\(two(secondOfDay % 60))Z"
    }
}
