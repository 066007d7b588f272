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

    /// `bytes` with ASCII letters folded to lower case.
    static func folded<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> [UInt8] { bytes.map(fold) }

    @inline(__always)
    private static func fold(_ byte: UInt8) -> UInt8 {
        byte &- 0x41 < 26 ? byte | 0x20 : byte
    }
}
