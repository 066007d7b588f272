import HaulCore
/// The links of a response's `Link` header fields (RFC 8288 §3), each target resolved against
/// the response's URL.
///
/// A field holds comma-separated link-values: `<URI-Reference>` then parameters, each
/// `; name`, `; name=token` or `; name="quoted-string"` (backslash escapes), with optional
/// whitespace around the separators. Commas inside `<>` and inside quoted strings do not separate
/// links. Parameter names are compared without ASCII case and only the first occurrence of a name
/// counts (RFC 8288 §3.3 says so for `rel`; here for every parameter). `rel` is a space-separated
/// list of relation types, kept ASCII-lowercased.
///
/// Parsing reads bytes, never `Character`s, and never fails: a malformed link-value or a target
/// that does not resolve to an http(s) URL is set aside in ``skipped`` and the next link is read.
/// The work is bounded: at most ``maximumLinkCount`` link-values and ``maximumFieldBytes`` bytes
/// of all the fields together are read; ``isCutOff`` tells when there was more.
package struct LinkHeader: Sendable, Hashable {
    /// The most link-values read, over all the fields; the rest are not looked at.
    package static let maximumLinkCount = 64
    /// The most bytes read, over all the fields; a link-value cut by this bound is dropped.
    package static let maximumFieldBytes = 16 * 1024

    /// One parameter of a link.
    package struct Parameter: Sendable, Hashable {
        /// The name, ASCII-lowercased (`title*` keeps its star).
        package var name: String
        /// The value (a quoted string without its quotes and escapes), or `nil` for a bare name
        /// such as RFC 6249's `pref`.
        package var value: String?
    }

    /// A link whose target resolved to an http or https URL.
    package struct Link: Sendable, Hashable {
        /// Where the link-value stands among all the link-values of the fields, from 0.
        package var position: Int
        /// The target reference as written between `<` and `>`.
        package var reference: String
        /// The reference resolved against the response's URL (a relative reference keeps that
        /// URL's userinfo, as ``HTTPURL/resolving(_:)`` does).
        package var target: HTTPURL
        /// Whether the reference itself names a user (`//user:password@host`): the userinfo is
        /// not in ``target``, but the server handed out a credential.
        package var referenceHasUserinfo: Bool
        /// The relation types of `rel`, ASCII-lowercased, in order.
        package var relations: [String]
        /// The parameters, first occurrence of each name only, in order.
        package var parameters: [Parameter]

        /// Whether `rel` lists `relation` (compared without ASCII case).
        package func hasRelation(_ relation: String) -> Bool {
            relations.contains { $0.asciiCaseInsensitiveEquals(relation) }
        }

        /// The parameter called `name` (compared without ASCII case), if the link has one.
        package func parameter(_ name: String) -> Parameter? {
            parameters.first { $0.name.asciiCaseInsensitiveEquals(name) }
        }
    }

    /// A link-value that was set aside, and why.
    package struct SkippedLink: Sendable, Hashable {
        /// Why a link-value was set aside.
        package enum Problem: Sendable, Hashable {
            /// Its syntax is broken: no `<...>` first, an unterminated quoted string, stray bytes.
            case malformed
            /// Its target has a scheme other than http or https (`ftp:`, `magnet:`...).
            case unsupportedScheme
            /// Its target is not a valid URL (a space, a bad host or port...).
            case invalidURL
        }

        /// Where the link-value stands among all the link-values of the fields, from 0.
        package var position: Int
        /// The target reference as written, empty when none was found.
        package var reference: String
        /// The relation types read before the problem, if any.
        package var relations: [String]
        /// The parameters read before the problem.
        package var parameters: [Parameter]
        /// What is wrong with it.
        package var problem: Problem
    }

    /// The usable links, in the order of the fields.
    package private(set) var links: [Link] = []
    /// The link-values set aside, in the order of the fields.
    package private(set) var skipped: [SkippedLink] = []
    /// Whether the fields held more than ``maximumLinkCount`` link-values or
    /// ``maximumFieldBytes`` bytes, whose rest was not read.
    package private(set) var isCutOff = false

    /// Parses the values of every `Link` field of a response.
    ///
    /// - Parameters:
    ///   - fieldValues: the field values, in the order received.
    ///   - base: the response's URL, against which relative targets resolve.
    package init(fieldValues: [String], base: HTTPURL) {
        var budget = Self.maximumFieldBytes
        var position = 0
        for value in fieldValues {
            let all = value.utf8
            let isCut = all.count > budget
            let bytes = Array(all.prefix(budget))
            budget -= bytes.count
            var scanner = LinkValueScanner(bytes: bytes)
            while scanner.skipToNextLink() {
                guard position < Self.maximumLinkCount else {
                    isCutOff = true
                    return
                }
                let raw = scanner.readLink()
                if isCut && raw.reachedEnd { break }   // it may have lost its end to the bound
                add(raw, position: position, base: base)
                position += 1
            }
            if isCut {
                isCutOff = true
                return
            }
        }
    }

    /// Resolves one link-value into ``links``, or sets it aside in ``skipped``.
    private mutating func add(_ raw: LinkValueScanner.RawLink, position: Int, base: HTTPURL) {
        let relations = raw.parameters.first { $0.name == "rel" }?.value.map(relationTypes) ?? []
        let reference = String(decoding: raw.reference.trimmingOWS(), as: UTF8.self)
        var problem = SkippedLink.Problem.malformed
        if !raw.isMalformed {
            do throws(HTTPClientError) {
                let target = try base.resolving(reference)
                links.append(Link(position: position, reference: reference, target: target,
                                  referenceHasUserinfo: hasUserinfo(reference), relations: relations,
                                  parameters: raw.parameters))
                return
            } catch {
                problem = error.kind == .redirectRefused || error.kind == .unsupportedScheme ? .unsupportedScheme : .invalidURL
            }
        }
        skipped.append(SkippedLink(position: position, reference: reference, relations: relations,
                                   parameters: raw.parameters, problem: problem))
    }
}

// MARK: - Reading link-values

/// Reads the link-values of one field's bytes, one at a time.
private struct LinkValueScanner {
    /// The parts of one link-value, as read.
    struct RawLink {
        /// The bytes between `<` and `>` (empty when there were none).
        var reference: ArraySlice<UInt8> = []
        /// The parameters, first occurrence of each name only.
        var parameters: [LinkHeader.Parameter] = []
        /// Whether its syntax is broken.
        var isMalformed = false
        /// Whether it ran to the end of the bytes rather than to a comma.
        var reachedEnd = false
    }

    let bytes: [UInt8]
    var index = 0

    /// Skips whitespace and empty list elements.
    ///
    /// - Returns: whether a link-value follows.
    mutating func skipToNextLink() -> Bool {
        while index < bytes.count, isWhitespace(bytes[index]) || bytes[index] == UInt8(ascii: ",") { index += 1 }
        return index < bytes.count
    }

    /// Reads one link-value and the comma after it; a broken one is read up to the next comma
    /// outside a quoted string.
    mutating func readLink() -> RawLink {
        var link = RawLink()
        guard bytes[index] == UInt8(ascii: "<"),
              let close = bytes[(index + 1)...].firstIndex(of: UInt8(ascii: ">")) else {
            return recovered(link)
        }
        link.reference = bytes[(index + 1)..<close]
        index = close + 1
        var names = Set<String>()
        while true {
            skipWhitespace()
            guard index < bytes.count else {
                link.reachedEnd = true
                return link
            }
            switch bytes[index] {
            case UInt8(ascii: ","):
                index += 1
                return link
            case UInt8(ascii: ";"):
                index += 1
                guard readParameter(into: &link, names: &names) else { return recovered(link) }
            default:
                return recovered(link)
            }
        }
    }

    /// Reads `name`, `name=token` or `name="quoted"` after a `;` (an empty parameter, as in
    /// `;;` or a trailing `;`, is let pass).
    ///
    /// - Returns: whether the parameter is well formed.
    private mutating func readParameter(into link: inout RawLink, names: inout Set<String>) -> Bool {
        skipWhitespace()
        let start = index
        while index < bytes.count, isTokenByte(bytes[index]) { index += 1 }
        let name = bytes[start..<index]
        skipWhitespace()
        guard !name.isEmpty else {
            return index == bytes.count || bytes[index] == UInt8(ascii: ";") || bytes[index] == UInt8(ascii: ",")
        }
        var value: String?
        if index < bytes.count, bytes[index] == UInt8(ascii: "=") {
            index += 1
            skipWhitespace()
            guard let read = readValue() else { return false }
            value = read
        }
        let lowered = asciiLowercasedText(name)
        if names.insert(lowered).inserted {
            link.parameters.append(LinkHeader.Parameter(name: lowered, value: value))
        }
        return true
    }

    /// A quoted string, or the bytes up to whitespace, `;` or `,` (tolerating values such as an
    /// unquoted media type, which are not tokens); `nil` for a broken quoted string.
    private mutating func readValue() -> String? {
        if index < bytes.count, bytes[index] == UInt8(ascii: "\"") { return readQuotedString() }
        let start = index
        while index < bytes.count, isUnquotedValueByte(bytes[index]) { index += 1 }
        return String(decoding: bytes[start..<index], as: UTF8.self)
    }

    /// A quoted string (RFC 9110 §5.6.4) without its quotes, escapes undone; `nil` when it is
    /// unterminated or holds a control byte (read to its closing quote all the same, so that
    /// the search for the next link starts outside it).
    private mutating func readQuotedString() -> String? {
        index += 1
        var value: [UInt8] = []
        var isValid = true
        while index < bytes.count {
            var byte = bytes[index]
            index += 1
            if byte == UInt8(ascii: "\"") { return isValid ? String(decoding: value, as: UTF8.self) : nil }
            if byte == UInt8(ascii: "\\") {
                guard index < bytes.count else { return nil }
                byte = bytes[index]
                index += 1
            }
            isValid = isValid && (byte == 0x09 || (byte >= 0x20 && byte != 0x7F))
            value.append(byte)
        }
        return nil
    }

    /// Marks `link` broken and moves past the next comma outside a quoted string (or to the end).
    private mutating func recovered(_ link: RawLink) -> RawLink {
        var link = link
        link.isMalformed = true
        var quoted = false
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            if quoted {
                if byte == UInt8(ascii: "\\") {
                    index += 1
                } else if byte == UInt8(ascii: "\"") {
                    quoted = false
                }
            } else if byte == UInt8(ascii: "\"") {
                quoted = true
            } else if byte == UInt8(ascii: ",") {
                return link
            }
        }
        link.reachedEnd = true
        return link
    }

    /// Moves past spaces and tabs.
    private mutating func skipWhitespace() {
        while index < bytes.count, isWhitespace(bytes[index]) { index += 1 }
    }
}

// MARK: - Bytes

/// Space or horizontal tab (HTTP's OWS).
private func isWhitespace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 }

/// A byte of an unquoted parameter value: visible ASCII or above, but not `"`, `;` or `,`.
private func isUnquotedValueByte(_ byte: UInt8) -> Bool {
    byte > 0x20 && byte != 0x7F && byte != UInt8(ascii: "\"") && byte != UInt8(ascii: ";") && byte != UInt8(ascii: ",")
}

/// The bytes as text with ASCII capitals made small.
private func asciiLowercasedText(_ bytes: some Collection<UInt8>) -> String {
    String(decoding: bytes.map { $0 >= 0x41 && $0 <= 0x5A ? $0 + 0x20 : $0 }, as: UTF8.self)
}

/// The relation types of a `rel` value: split at spaces and tabs, ASCII-lowercased.
private func relationTypes(_ value: String) -> [String] {
    value.utf8.split(whereSeparator: isWhitespace).map { asciiLowercasedText($0) }
}

/// Whether a reference with an authority (`scheme://` or `//`) names a user before its host.
private func hasUserinfo(_ reference: String) -> Bool {
    let bytes = Array(reference.utf8)
    var start = 0
    if let colon = bytes.firstIndex(where: { isOneOf($0, ":/?#") }), bytes[colon] == UInt8(ascii: ":") {
        start = colon + 1
    }
    guard bytes[start...].starts(with: "//".utf8) else { return false }
    let authority = bytes[(start + 2)...].prefix { !isOneOf($0, "/?#") }
    return authority.contains(UInt8(ascii: "@"))
}

extension ArraySlice<UInt8> {
    /// The bytes without the spaces and tabs around them.
    fileprivate func trimmingOWS() -> ArraySlice<UInt8> {
        var bytes = self
        while let first = bytes.first, isWhitespace(first) { bytes = bytes.dropFirst() }
        while let last = bytes.last, isWhitespace(last) { bytes = bytes.dropLast() }
        return bytes
    }
}
