/// A file name split into a stem and an extension, the way Haul treats names when it
/// shortens them or numbers them.
///
/// The extension is what follows the last dot, provided the stem before it is not empty
/// and the extension is 1 to ``maximumExtensionByteCount`` UTF-8 bytes with no whitespace.
/// `.tar.gz`, `.tar.bz2`, `.tar.xz` and `.tar.zst` count as one extension, so
/// `a.tar.gz` splits into `a` and `tar.gz`. Anything else has no extension:
/// `README`, `_bashrc` with a leading underscore, `notes.` (empty extension),
/// `v.final draft` (whitespace).
struct FileNameParts: Sendable, Equatable {
    /// The longest extension kept when a name is shortened or numbered, in UTF-8 bytes.
    static let maximumExtensionByteCount = 16

    /// Archive extensions that are really two: `a.tar.gz` is numbered `a.1.tar.gz`.
    private static let compoundExtensions = ["tar.gz", "tar.bz2", "tar.xz", "tar.zst"]
    private static let dottedCompoundExtensions = compoundExtensions.map { "." + $0 }

    /// The name without its extension (and without the dot before it).
    var stem: String
    /// The extension without its leading dot, or `nil` when the name has none.
    var fileExtension: String?

    /// Splits a name into stem and extension.
    ///
    /// - Parameter name: a single file name (no separators).
    init(_ name: String) {
        for compound in Self.compoundExtensions {
            let suffix = "." + compound
            if name.utf8.count > suffix.utf8.count, Self.hasASCIISuffixIgnoringCase(name, suffix) {
                let stemEnd = name.utf8.index(name.utf8.endIndex, offsetBy: -suffix.utf8.count)
                stem = String(name[..<stemEnd])
                fileExtension = String(name[name.utf8.index(after: stemEnd)...])
                return
            }
        }
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else {
            stem = name
            fileExtension = nil
            return
        }
        let candidate = name[name.index(after: dot)...]
        guard !candidate.isEmpty,
              candidate.utf8.count <= Self.maximumExtensionByteCount,
              !candidate.contains(where: \.isWhitespace)
        else {
            stem = name
            fileExtension = nil
            return
        }
        stem = String(name[..<dot])
        fileExtension = String(candidate)
    }

    /// The name put back together: `stem.extension`, or the stem alone.
    var name: String {
        fileExtension.map { "\(stem).\($0)" } ?? stem
    }

    /// Whether `name` ends with the ASCII `suffix`, ignoring ASCII case.
    static func hasASCIISuffixIgnoringCase(_ name: String, _ suffix: String) -> Bool {
        let fast = name.utf8.withContiguousStorageIfAvailable { name in
            suffix.utf8.withContiguousStorageIfAvailable { suffix in hasASCIISuffixIgnoringCase(name, suffix) }
        }
        if let fast, let answer = fast { return answer }
        return hasASCIISuffixIgnoringCase(Array(name.utf8)[...], Array(suffix.utf8)[...])
    }

    /// Whether the bytes of `name` end with those of `suffix`, ignoring ASCII case.
    private static func hasASCIISuffixIgnoringCase<Bytes: RandomAccessCollection<UInt8>>(_ name: Bytes, _ suffix: Bytes) -> Bool
        where Bytes.Index == Int {
        guard name.count >= suffix.count else { return false }
        let start = name.endIndex - suffix.count
        for offset in 0..<suffix.count
        where lowercased(name[start + offset]) != lowercased(suffix[suffix.startIndex + offset]) {
            return false
        }
        return true
    }

    /// An ASCII letter in lower case; any other byte as it is.
    private static func lowercased(_ byte: UInt8) -> UInt8 {
        byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte + 32 : byte
    }

    /// Whether `name` has an extension (``fileExtension`` is not `nil`), found without splitting
    /// the name when it is ASCII.
    static func hasExtension(_ name: String) -> Bool {
        let bytes = name.utf8
        guard bytes.allSatisfy({ $0 < 0x80 }) else { return FileNameParts(name).fileExtension != nil }
        if dottedCompoundExtensions.contains(where: { bytes.count > $0.utf8.count && hasASCIISuffixIgnoringCase(name, $0) }) {
            return true
        }
        guard let dot = bytes.lastIndex(of: UInt8(ascii: ".")), dot != bytes.startIndex else { return false }
        let candidate = bytes[bytes.index(after: dot)...]
        return !candidate.isEmpty && candidate.count <= maximumExtensionByteCount
            && !candidate.contains { $0 == 0x20 || (0x09...0x0D).contains($0) }
    }
}

extension String {
    /// The longest prefix of this string that fits in `maxBytes` UTF-8 bytes.
    ///
    /// Cuts between `Character`s so that no accent is separated from its letter. When even
    /// the first `Character` is too long (a letter followed by hundreds of combining marks),
    /// cuts between Unicode scalars instead, so the result is still valid UTF-8 and only
    /// empty when `maxBytes` cannot hold a single scalar.
    ///
    /// - Parameter maxBytes: the byte budget, at least 0.
    /// - Returns: `self` when it fits, else the prefix.
    func truncatedToUTF8(maxBytes: Int) -> String {
        if utf8.count <= maxBytes { return self }
        var used = 0
        var end = startIndex
        for character in self {
            let size = character.utf8.count
            if used + size > maxBytes { break }
            used += size
            end = index(after: end)
        }
        if end != startIndex { return String(self[..<end]) }
        var scalars = String.UnicodeScalarView()
        for scalar in unicodeScalars {
            let size = UTF8.width(scalar)
            if used + size > maxBytes { break }
            used += size
            scalars.append(scalar)
        }
        return String(scalars)
    }
}
