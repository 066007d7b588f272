import HaulHTTP
import HaulCore
/// Reads the file name a server proposes in a `Content-Disposition` header (RFC 6266).
///
/// The value is a disposition type (`attachment`, `inline` or any other token) followed by
/// `;`-separated parameters. `filename*` (RFC 8187 extended value: `charset'language'%XX…`,
/// UTF-8 or ISO-8859-1) is preferred over `filename` (a token or a quoted string with `\`
/// escapes). The name returned is raw: callers pass it through ``FileNameSanitizer``.
enum ContentDisposition: Sendable {
    /// The file name proposed by a `Content-Disposition` header value.
    ///
    /// Syntax errors (a missing type, a parameter without `=`, an unterminated quoted
    /// string, text after a value, a parameter given twice) make the whole value unusable.
    /// A `filename*` that cannot be decoded (unknown charset, bad `%` escape, bytes that are
    /// not valid in its charset, a quoted value, an empty value) is ignored and `filename`
    /// is used instead.
    ///
    /// - Parameter headerValue: the field value, e.g. `attachment; filename="a.txt"`.
    /// - Returns: the name (not yet sanitised), or `nil` when there is none or the value is invalid.
    static func filename(from headerValue: String) -> String? {
        var parser = Parser(scalars: Array(headerValue.unicodeScalars))
        guard let parameters = parser.parse() else { return nil }
        var plain: String?
        var extended: String?
        var seen = Set<String>()
        for parameter in parameters {
            let key = parameter.name.lowercased()
            guard seen.insert(key).inserted else { return nil }
            switch key {
            case "filename":
                plain = parameter.value
            case "filename*" where !parameter.wasQuoted:
                extended = decodeExtendedValue(parameter.value)
            default:
                break
            }
        }
        return [extended, plain].lazy.compactMap { $0 }.first { !$0.isEmpty }
    }

    /// Decodes an RFC 8187 `ext-value`: `charset'[language]'value-chars`.
    ///
    /// - Returns: the text, or `nil` for another charset, a malformed value or invalid bytes.
    static func decodeExtendedValue(_ value: String) -> String? {
        let pieces = value.split(separator: "'", maxSplits: 2, omittingEmptySubsequences: false)
        guard pieces.count == 3, let bytes = PercentDecoding.strict(Array(pieces[2].utf8)) else { return nil }
        let charset = String(pieces[0])
        if charset.asciiCaseInsensitiveEquals("UTF-8") {
            return String(validating: bytes, as: UTF8.self)
        }
        if charset.asciiCaseInsensitiveEquals("ISO-8859-1") {
            var scalars = String.UnicodeScalarView()
            scalars.append(contentsOf: bytes.map { Unicode.Scalar($0) })
            return String(scalars)
        }
        return nil
    }

}

extension ContentDisposition {
    /// One `name=value` parameter.
    struct Parameter: Sendable, Equatable {
        /// The name as written (compare it ignoring case).
        var name: String
        /// The value, unquoted and unescaped.
        var value: String
        /// Whether the value was a quoted string.
        var wasQuoted: Bool
    }

    /// A recursive-descent parser over the scalars of a header value.
    ///
    /// Scalars at or above U+0080 are accepted inside quoted strings (RFC 9110 `obs-text`),
    /// so a server sending raw UTF-8 there still works; tokens are ASCII only.
    struct Parser: Sendable {
        private let scalars: [Unicode.Scalar]
        private var position = 0

        init(scalars: [Unicode.Scalar]) {
            self.scalars = scalars
        }

        /// Parses `type *( OWS ";" OWS [ name OWS "=" OWS value ] ) OWS`.
        ///
        /// Empty parameters (`attachment;` or `a;; b=c`) are tolerated, as browsers do.
        ///
        /// - Returns: the parameters, or `nil` on a syntax error.
        mutating func parse() -> [Parameter]? {
            skipWhitespace()
            guard token() != nil else { return nil }
            var parameters: [Parameter] = []
            while true {
                skipWhitespace()
                guard let next = peek() else { return parameters }
                guard next == ";" else { return nil }
                position += 1
                skipWhitespace()
                guard let current = peek(), current != ";" else { continue }
                guard let name = token() else { return nil }
                skipWhitespace()
                guard peek() == "=" else { return nil }
                position += 1
                skipWhitespace()
                if peek() == "\"" {
                    guard let value = quotedString() else { return nil }
                    parameters.append(Parameter(name: name, value: value, wasQuoted: true))
                } else {
                    guard let value = token() else { return nil }
                    parameters.append(Parameter(name: name, value: value, wasQuoted: false))
                }
            }
        }

        private func peek() -> Unicode.Scalar? {
            position < scalars.count ? scalars[position] : nil
        }

        private mutating func skipWhitespace() {
            while let scalar = peek(), scalar == " " || scalar == "\t" { position += 1 }
        }

        /// One or more `tchar`s (RFC 9110).
        private mutating func token() -> String? {
            let start = position
            while let scalar = peek(), Self.isTokenCharacter(scalar) { position += 1 }
            guard position > start else { return nil }
            var view = String.UnicodeScalarView()
            view.append(contentsOf: scalars[start..<position])
            return String(view)
        }

        /// A quoted string starting at `"`: `qdtext` and `\`-escaped pairs up to the closing `"`.
        private mutating func quotedString() -> String? {
            position += 1
            var view = String.UnicodeScalarView()
            while let scalar = peek() {
                position += 1
                switch scalar {
                case "\"":
                    return String(view)
                case "\\":
                    guard let escaped = peek(), Self.isQuotedTextCharacter(escaped) || escaped == "\"" || escaped == "\\" else {
                        return nil
                    }
                    position += 1
                    view.append(escaped)
                case _ where Self.isQuotedTextCharacter(scalar):
                    view.append(scalar)
                default:
                    return nil
                }
            }
            return nil
        }

        private static func isTokenCharacter(_ scalar: Unicode.Scalar) -> Bool {
            switch scalar {
            case "a"..."z", "A"..."Z", "0"..."9",
                 "!", "#", "$", "%", "&", "'", "*", "+", "-", ".", "^", "_", "`", "|", "~":
                true
            default:
                false
            }
        }

        /// `qdtext`: HTAB, SP, visible ASCII except `"` and `\`, and `obs-text` (U+0080 and up).
        private static func isQuotedTextCharacter(_ scalar: Unicode.Scalar) -> Bool {
            switch scalar.value {
            case 0x09, 0x20, 0x21, 0x23...0x5B, 0x5D...0x7E: true
            case 0x80...: true
            default: false
            }
        }
    }
}
