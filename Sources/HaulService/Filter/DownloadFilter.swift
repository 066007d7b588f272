/// Which downloads of a list to show or change: a piece of text found in the file name or a URL,
/// and the statuses wanted.
///
/// Text is matched by UTF-8 bytes, with ASCII letters folded (`ISO` finds `debian.iso`); other
/// bytes match only themselves, so nothing depends on how a string splits into characters.
public struct DownloadFilter: Sendable, Equatable {
    /// The text to find; empty finds every download.
    public var text: String
    /// The statuses wanted; `nil` for every one.
    public var statuses: Set<ServiceDownload.Status>?

    /// A filter on `text` (empty for none) over `statuses` (`nil` for all).
    public init(text: String = "", statuses: Set<ServiceDownload.Status>? = nil) {
        self.text = text
        self.statuses = statuses
    }

    /// The statuses a state selector's name stands for: `all`, `active`, `waiting`, `paused`,
    /// `finished` (complete) or `failed` (error); `nil` for another name.
    public static func statuses(named name: String) -> Set<ServiceDownload.Status>?? {
        switch name {
        case "all": return .some(nil)
        case "active": return [.active]
        case "waiting": return [.waiting]
        case "paused": return [.paused]
        case "finished": return [.complete]
        case "failed": return [.error]
        default: return nil
        }
    }

    /// The text's bytes with ASCII letters folded to lower case.
    var needle: [UInt8] { Self.folded(text.utf8) }

    /// Whether the filter wants a download with this status.
    func wants(_ status: ServiceDownload.Status) -> Bool {
        statuses.map { $0.contains(status) } ?? true
    }

    /// Whether a download with these fields matches: its status is wanted and `needle` (from
    /// ``needle``) is in its file's path, its `out` name or one of its URLs.
    func matches(status: ServiceDownload.Status, urls: [String], file: String?, fileName: String?, needle: [UInt8]) -> Bool {
        guard wants(status) else { return false }
        guard !needle.isEmpty else { return true }
        if let file, Self.contains(file, needle) { return true }
        if let fileName, Self.contains(fileName, needle) { return true }
        return urls.contains { Self.contains($0, needle) }
    }

    /// Whether `needle` (folded) occurs in `haystack`, ASCII letters folded.
    static func contains(_ haystack: String, _ needle: [UInt8]) -> Bool {
        var haystack = haystack
        return haystack.withUTF8 { bytes in contains(bytes, needle) }
    }

    /// Whether `needle` (folded) occurs in `bytes`, ASCII letters folded.
    static func contains(_ bytes: UnsafeBufferPointer<UInt8>, _ needle: [UInt8]) -> Bool {
        guard needle.count <= bytes.count else { return false }
        guard let first = needle.first else { return true }
        return needle.withUnsafeBufferPointer { needle in
            var start = 0
            while start + needle.count <= bytes.count {
                if fold(bytes[start]) == first, matchesAt(bytes, start, needle) { return true }
                start += 1
            }
            return false
        }
    }

    private static func matchesAt(_ bytes: UnsafeBufferPointer<UInt8>, _ start: Int, _ needle: UnsafeBufferPointer<UInt8>) -> Bool {
        var index = 1
        while index < needle.count {
            if fold(bytes[start + index]) != needle[index] { return false }
            index += 1
        }
        return true
    }

    /// `bytes` with ASCII letters folded to lower case.
    static func folded<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> [UInt8] { bytes.map(fold) }

    @inline(__always)
    private static func fold(_ byte: UInt8) -> UInt8 {
        byte &- 0x41 < 26 ? byte | 0x20 : byte
    }
}
