import HaulCore
import HaulHTTP
/// Turns an untrusted name (from a header or a URL) into a safe single file name.
///
/// The result is one path component that ``ContainedPath`` accepts (no control characters, no
/// `/` or scalar that normalizes to one, never made of dots only), never starting with a dot
/// or a dot leader, never ending in one of Haul's own suffixes (`.part`, `.resume`, `.lock`),
/// and at most ``maximumByteCount`` UTF-8 bytes, so that `NAME.resume` still fits the usual
/// 255-byte limit on file names.
enum FileNameSanitizer: Sendable {
    /// The longest name produced, in UTF-8 bytes: 255 minus the longest suffix Haul adds (`.resume`).
    static let maximumByteCount = 255 - ".resume".utf8.count

    /// Suffixes Haul itself puts after a final name; a name ending in one gets a `_` appended,
    /// so a download can never be mistaken for another one's partial file, resume record or lock.
    static let reservedSuffixes = [".part", ".resume", ".rtmp", ".lock"]

    /// Sanitises a raw name.
    ///
    /// In order: every U+FFFD (left by invalid UTF-8) becomes `_`; control characters
    /// (U+0000–U+001F, U+007F, U+0080–U+009F) and bidirectional formatting characters
    /// (which can disguise an extension) are removed; the string is split, by scalar, on `/`,
    /// `\` and the scalars whose compatibility form holds one of them (U+FF0F, U+FF3C, U+FE68,
    /// ℀ ℁ ℅ ℆), and the last non-empty component kept; surrounding whitespace and trailing
    /// dots (and dot leaders) are trimmed; a leading dot or dot leader becomes `_`; the name is
    /// shortened to ``maximumByteCount`` bytes keeping its extension (see ``FileNameParts``)
    /// and whole `Character`s; a name ending in a reserved suffix (compared ignoring ASCII
    /// case) gets a `_` appended; a name ``ContainedPath`` refuses is not returned.
    /// Sanitising a sanitised name returns it unchanged.
    ///
    /// - Parameter raw: the untrusted name.
    /// - Returns: the safe name, or `nil` when nothing usable is left (empty, `.`, `..`).
    static func sanitize(_ raw: String) -> String? {
        isPlain(raw) ? raw : sanitizeStepByStep(raw)
    }

    /// ``sanitize(_:)`` without its shortcut for plain names (tests compare the two).
    static func sanitizeStepByStep(_ raw: String) -> String? {
        var scalars = String.UnicodeScalarView()
        for scalar in raw.unicodeScalars where !isRemoved(scalar) {
            scalars.append(scalar == "\u{FFFD}" ? "_" : scalar)
        }
        // Split by scalar: a separator followed by a combining mark is one Character, which a
        // split by Character would keep inside the name.
        guard let component = scalars.split(whereSeparator: isSeparator).last else {
            return nil
        }
        var name = trimmed(String(String.UnicodeScalarView(component)))
        guard !name.isEmpty else { return nil }
        // By scalar: a dot followed by a combining mark is one Character, which `hasPrefix(".")`
        // does not see, yet the name still starts with a dot byte.
        if let first = name.unicodeScalars.first, ContainedPath.isDotLike(first) {
            name = "_" + String(name.unicodeScalars.dropFirst())
        }
        name = shortened(name, toBytes: maximumByteCount)
        if reservedSuffixes.contains(where: { FileNameParts.hasASCIISuffixIgnoringCase(name, $0) }) {
            name = shortened(name, toBytes: maximumByteCount - 1) + "_"
        }
        return (try? ContainedPath.check(component: name)) == nil ? nil : name
    }

    /// `/`, `\` and the scalars whose compatibility form holds one of them.
    private static func isSeparator(_ scalar: Unicode.Scalar) -> Bool {
        ContainedPath.isSeparatorLike(scalar) || scalar == "\\" || scalar == "\u{FF3C}" || scalar == "\u{FE68}"
    }

    /// Whether every step of ``sanitize(_:)`` would leave `raw` as it is (the usual name, told
    /// apart fast): printable ASCII without spaces or separators, neither starting nor ending
    /// with a dot, short enough, and without a reserved suffix.
    private static func isPlain(_ raw: String) -> Bool {
        let bytes = raw.utf8
        guard let first = bytes.first, let last = bytes.last, first != UInt8(ascii: "."), last != UInt8(ascii: "."),
              bytes.count <= maximumByteCount,
              bytes.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "/") && $0 != UInt8(ascii: "\\") })
        else { return false }
        return !reservedSuffixes.contains { FileNameParts.hasASCIISuffixIgnoringCase(raw, $0) }
    }

    /// Whether a scalar is dropped: C0 and C1 controls, DEL, and bidirectional formatting
    /// characters (U+200E, U+200F, U+202A–U+202E, U+2066–U+2069).
    private static func isRemoved(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F: true
        case 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: true
        default: false
        }
    }

    /// Removes surrounding whitespace, then trailing dots (and dot leaders) and whitespace, by scalar.
    private static func trimmed(_ text: String) -> String {
        var scalars = Substring(text).unicodeScalars.drop(while: \.properties.isWhitespace)
        while let last = scalars.last, last.properties.isWhitespace || ContainedPath.isDotLike(last) {
            scalars = scalars.dropLast()
        }
        return String(String.UnicodeScalarView(scalars))
    }

    /// Shortens a name to `maxBytes` UTF-8 bytes, cutting the stem and keeping the extension.
    ///
    /// Without an extension the end of the name is cut. Whatever the cut leaves at the end
    /// (dots, whitespace) is trimmed, and a leading dot of a cut stem is not possible since
    /// the stem keeps its first character.
    private static func shortened(_ name: String, toBytes maxBytes: Int) -> String {
        guard name.utf8.count > maxBytes else { return name }
        let parts = FileNameParts(name)
        guard let ext = parts.fileExtension else {
            return trimmed(name.truncatedToUTF8(maxBytes: maxBytes))
        }
        let stemBudget = maxBytes - ext.utf8.count - 1
        return parts.stem.truncatedToUTF8(maxBytes: stemBudget) + "." + ext
    }
}
