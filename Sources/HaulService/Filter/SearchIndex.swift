import HaulCore

/// What a filter searches in each download of a service's list, kept beside the list so that a
/// filter over 100,000 downloads reads one buffer of bytes instead of copying each entry.
///
/// Each download has a slot: its status and its text (the file's path, its `out` name and its
/// URLs, ASCII letters folded, separated by a NUL, which no path, name, URL or needle holds),
/// stored in one shared buffer. A changed download gets a new slot and its old one is left dead; the buffer
/// is compacted once the dead hold more than the living.
struct SearchIndex {
    private struct Slot {
        var id: DownloadID
        var status: ServiceDownload.Status
        var start: Int
        var count: Int
        var alive = true
    }

    private var slots: [Slot] = []
    private var bytes: [UInt8] = []
    private var slotOf: [DownloadID: Int] = [:]
    private var deadBytes = 0

    /// How many downloads it holds.
    var count: Int { slotOf.count }

    /// Sets a download's fields (a new download, or changed ones).
    mutating func set(_ id: DownloadID, status: ServiceDownload.Status, urls: [String], file: String?, fileName: String?) {
        remove(id)
        var text = DownloadFilter.folded((file ?? "").utf8)
        for field in [fileName ?? ""] + urls {
            text.append(0)
            text += DownloadFilter.folded(field.utf8)
        }
        slotOf[id] = slots.count
        slots.append(Slot(id: id, status: status, start: bytes.count, count: text.count))
        bytes += text
    }

    /// Sets a download's status (nothing else changed).
    mutating func setStatus(_ id: DownloadID, _ status: ServiceDownload.Status) {
        if let slot = slotOf[id] { slots[slot].status = status }
    }

    /// Forgets a download.
    mutating func remove(_ id: DownloadID) {
        guard let slot = slotOf.removeValue(forKey: id) else { return }
        slots[slot].alive = false
        deadBytes += slots[slot].count
        if deadBytes > 1 << 16, deadBytes > bytes.count / 2 { compact() }
    }

    /// Whether it holds `id`.
    func contains(_ id: DownloadID) -> Bool { slotOf[id] != nil }

    /// The downloads that match, in no order (a needle with a NUL matches none).
    func matches(_ filter: DownloadFilter) -> [DownloadMatch] {
        let needle = filter.needle
        guard !needle.contains(0) else { return [] }
        var found: [DownloadMatch] = []
        bytes.withUnsafeBufferPointer { buffer in
            needle.withUnsafeBufferPointer { needle in
                for slot in slots where slot.alive && filter.wants(slot.status) {
                    if ByteSearch.contains(needle, in: UnsafeBufferPointer(rebasing: buffer[slot.start..<(slot.start + slot.count)])) {
                        found.append(DownloadMatch(id: slot.id, status: slot.status))
                    }
                }
            }
        }
        return found
    }

    /// Drops the dead slots and their bytes.
    private mutating func compact() {
        var slots: [Slot] = [], bytes: [UInt8] = []
        slots.reserveCapacity(slotOf.count)
        bytes.reserveCapacity(self.bytes.count - deadBytes)
        for slot in self.slots where slot.alive {
            slotOf[slot.id] = slots.count
            slots.append(Slot(id: slot.id, status: slot.status, start: bytes.count, count: slot.count))
            bytes += self.bytes[slot.start..<(slot.start + slot.count)]
        }
        (self.slots, self.bytes, deadBytes) = (slots, bytes, 0)
    }
}
