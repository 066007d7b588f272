import HaulCore
/// Removes secrets from a URL-like string so it can appear in messages, logs and events.
///
/// Works on any string, parseable or not: the userinfo (`user:password@`) is removed, and the
/// value of every query (or fragment) parameter whose name looks secret is replaced by
/// `REDACTED`. A name looks secret when, compared case-insensitively, it contains `sig`,
/// `signature`, `token`, `key`, `secret`, `password`, `passwd`, `pwd`, `credential`, `auth`,
/// `session` or `policy`, or starts with `x-amz-` or `x-oss-`.
///
/// - Parameters:
///   - string: the URL text, as typed by a user or received in a header.
///   - aggressive: also treat an `@` after a `/` (but before the query) as the end of a
///     userinfo. Used for strings that failed to parse, whose password may contain a raw `/`.
/// - Returns: the string without its secrets.
package func redactedURLString(_ string: String, aggressive: Bool = false) -> String {
    // Without `?`, `#` and `@` there is nothing to redact (the usual URL of a file): no copy.
    let hasNothingToRedact = string.utf8.withContiguousStorageIfAvailable { bytes in
        !bytes.contains { $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") || $0 == UInt8(ascii: "@") }
    }
    if hasNothingToRedact == true { return string }
    let bytes = Array(string.utf8)
    let queryStart = bytes.firstIndex { $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") } ?? bytes.endIndex
    var output: [UInt8] = []
    output.reserveCapacity(bytes.count)

    // Userinfo: between the first "//" and the last "@" of the authority.
    var cursor = 0
    if let slashes = firstDoubleSlash(bytes[..<queryStart]) {
        let authorityStart = slashes + 2
        let authorityEnd = aggressive
            ? queryStart
            : bytes[authorityStart..<queryStart].firstIndex { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "\\") } ?? queryStart
        output.append(contentsOf: bytes[..<authorityStart])
        if let at = bytes[authorityStart..<authorityEnd].lastIndex(of: UInt8(ascii: "@")) {
            cursor = at + 1
        } else {
            cursor = authorityStart
        }
    }
    output.append(contentsOf: bytes[cursor..<queryStart])

    // Query and fragment parameters.
    var index = queryStart
    while index < bytes.endIndex {
        output.append(bytes[index])  // "?", "#", "&" or ";"
        index += 1
        let end = bytes[index...].firstIndex { isParameterSeparator($0) } ?? bytes.endIndex
        let parameter = bytes[index..<end]
        if let equals = parameter.firstIndex(of: UInt8(ascii: "=")), equals + 1 < end,
           isSecretParameterName(parameter[..<equals]) {
            output.append(contentsOf: parameter[...equals])
            output.append(contentsOf: "REDACTED".utf8)
        } else {
            output.append(contentsOf: parameter)
        }
        index = end
    }
    return String(decoding: output, as: UTF8.self)
}

/// Replaces every occurrence of a known secret in `text` by `REDACTED`, comparing UTF-8 bytes,
/// also where some or all of its bytes are percent-encoded (`%61` for `a`), as they may be in a
/// URL's path or query.
///
/// - Parameters:
///   - secret: the secret's text; an empty one leaves `text` as it is.
///   - text: a URL or a log line.
/// - Returns: the text without the secret.
package func redactingSecret(_ secret: String, in text: String) -> String {
    let needle = Array(secret.utf8)
    let original = Array(text.utf8)
    guard !needle.isEmpty, original.count >= needle.count else { return text }
    let (decoded, decodedStarts) = PercentDecoding.lenient(original)
    let starts = decodedStarts + [original.count]   // where each decoded byte starts in the original, and its end
    var output: [UInt8] = [], copied = 0, position = 0, found = false
    while position + needle.count <= decoded.count {
        guard decoded[position..<(position + needle.count)].elementsEqual(needle) else {
            position += 1
            continue
        }
        output += original[copied..<starts[position]]
        output += "REDACTED".utf8
        copied = starts[position + needle.count]
        position += needle.count
        found = true
    }
    guard found else { return text }
    output += original[copied...]
    return String(decoding: output, as: UTF8.self)
}

private func firstDoubleSlash(_ bytes: ArraySlice<UInt8>) -> Int? {
    var index = bytes.startIndex
    while index + 1 < bytes.endIndex {
        if bytes[index] == UInt8(ascii: "/") && bytes[index + 1] == UInt8(ascii: "/") { return index }
        index += 1
    }
    return nil
}

private func isParameterSeparator(_ byte: UInt8) -> Bool {
    byte == UInt8(ascii: "&") || byte == UInt8(ascii: ";") || byte == UInt8(ascii: "#") || byte == UInt8(ascii: "?")
}

private let secretNameParts = [
    "sig", "signature", "token", "key", "secret", "password", "passwd", "pwd", "credential", "auth", "session", "policy",
]

/// Whether a (still percent-encoded) parameter name looks like it carries a secret.
private func isSecretParameterName(_ raw: ArraySlice<UInt8>) -> Bool {
    let name = String(decoding: percentDecodedLowercase(raw), as: UTF8.self)
    if name.hasPrefix("x-amz-") || name.hasPrefix("x-oss-") { return true }
    return secretNameParts.contains { name.contains($0) }
}

/// Percent-decodes (leniently: malformed escapes stay as they are) and lowercases ASCII letters.
private func percentDecodedLowercase(_ raw: ArraySlice<UInt8>) -> [UInt8] {
    PercentDecoding.lenient(raw).bytes.map { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") ? $0 + 32 : $0 }
}

