import Haul
import HaulService
import HaulJSON

/// aria2's view of a download (`tellStatus` and the lists): every number and Boolean a string,
/// members in aria2's (alphabetical) order, `keys` filtering.
enum Aria2Status {
    /// aria2's piece length for HTTP downloads (its `--piece-length` default): the unit of
    /// `bitfield` and `numPieces`.
    static let pieceLength: Int64 = 1 << 20

    /// The status object of `download`, with only `keys` when given (an empty list means all).
    ///
    /// `segments` (Haul's extension, for `tellStatus`): each connection's range in flight,
    /// `{"start", "end", "position"}` as decimal strings; the key is left out when `nil` or empty.
    /// `sources` (Haul's extension too): each server of a transfer that has several, see
    /// ``sources(_:urls:)``; left out with one.
    static func json(_ download: ServiceDownload, keys: Set<String>? = nil, segments: [SegmentInFlight]? = nil,
                     sources: [SourceInUse] = []) -> JSONValue {
        var object = JSONObject()
        func add(_ key: String, _ value: @autoclosure () -> JSONValue) {
            if keys?.isEmpty != false || keys!.contains(key) { object.append(key, value()) }
        }
        let total = download.totalBytes ?? 0
        let pieces = total > 0 ? (total + pieceLength - 1) / pieceLength : 0
        if pieces > 0 { add("bitfield", .string(bitfield(download.completedRanges, total: total))) }
        add("completedLength", .string(String(download.completedBytes)))
        add("connections", .string(String(download.connections)))
        add("dir", .string(download.directoryPath))
        add("downloadSpeed", .string(String(Int64(download.bytesPerSecond))))
        if download.status.isStopped {
            add("errorCode", .string(String(errorCode(download))))
            if let failure = download.failure { add("errorMessage", .string(failure.message)) }
        }
        add("files", files(download, sources: sources))
        add("gid", .string(download.id.hex))
        if let node = download.node { add("node", .string(node)) }   // Haul's extension: the fleet's node
        add("numPieces", .string(String(pieces)))
        add("pieceLength", .string(String(pieceLength)))
        if let segments, !segments.isEmpty { add("segments", self.segments(segments, total: total)) }
        if sources.count > 1 { add("sources", self.sources(sources, urls: download.urls)) }
        add("status", .string(download.status.rawValue))
        add("totalLength", .string(String(total)))
        add("uploadLength", "0")
        add("uploadSpeed", "0")
        return .object(object)
    }

    /// The segments as JSON, clamped so that `start <= position <= end <= total` holds.
    static func segments(_ segments: [SegmentInFlight], total: Int64) -> JSONValue {
        .array(segments.map { segment in
            let end = min(segment.end, total), start = min(segment.start, end)
            let position = min(max(segment.position, start), end)
            return .object(JSONObject([.init("start", .string(String(start))), .init("end", .string(String(end))),
                                       .init("position", .string(String(position)))]))
        })
    }

    /// The servers of a transfer: `{"uri", "state", "connections", "downloadSpeed",
    /// "completedLength"}` with `"reason"` for one set aside; `state` is `active` (it has
    /// connections), `waiting` or `setAside`; the URI as given (a mirror its server named: redacted).
    static func sources(_ sources: [SourceInUse], urls: [String]) -> JSONValue {
        .array(sources.map { source in
            let uri = source.requestIndex.flatMap { urls.indices.contains($0) ? urls[$0] : nil } ?? source.url
            let state = source.setAsideReason != nil ? "setAside" : source.connections > 0 ? "active" : "waiting"
            var object = JSONObject([
                .init("completedLength", .string(String(source.bytes))), .init("connections", .string(String(source.connections))),
                .init("downloadSpeed", .string(String(Int64(source.bytesPerSecond)))),
            ])
            if let reason = source.setAsideReason { object.append("reason", .string(reason)) }
            object.append("state", .string(state))
            object.append("uri", .string(uri))
            return .object(object)
        })
    }

    /// `getFiles`: the one file of an HTTP download (never an empty list).
    static func files(_ download: ServiceDownload, sources: [SourceInUse] = []) -> JSONValue {
        var file = JSONObject()
        file.append("completedLength", .string(String(download.completedBytes)))
        file.append("index", "1")
        file.append("length", .string(String(download.totalBytes ?? 0)))
        file.append("path", .string(download.filePath ?? ""))
        file.append("selected", "true")
        file.append("uris", uris(download, sources: sources))
        return [.object(file)]
    }

    /// `getUris`: a URL is `used` once it served the running transfer (a connection, bytes, or
    /// set aside after a try), else `waiting`; without a transfer over ranges in flight, the
    /// first URL is `used` once the download has run.
    static func uris(_ download: ServiceDownload, sources: [SourceInUse] = []) -> JSONValue {
        let started = download.status == .active || download.status.isStopped || download.completedBytes > 0
        let tried = Set(sources.filter { $0.connections > 0 || $0.bytes > 0 || $0.setAsideReason != nil }.compactMap(\.requestIndex))
        return .array(download.urls.enumerated().map { index, url in
            let used = sources.isEmpty ? index == 0 && started : tried.contains(index)
            return .object(JSONObject([.init("status", .string(used ? "used" : "waiting")), .init("uri", .string(url))]))
        })
    }

    /// aria2's `errorCode` of a result: 0 complete, 31 removed (aria2's `REMOVED`), else the
    /// exit code aria2 gives that kind of failure.
    static func errorCode(_ download: ServiceDownload) -> Int {
        switch download.status {
        case .complete: 0
        case .removed: 31
        default: download.failure.map(errorCode) ?? 1
        }
    }

    /// aria2's exit code for a Haul failure (1, aria2's unknown error, for those aria2 has no
    /// code for, such as `internalError` and `resourceExhausted`).
    static func errorCode(_ failure: ServiceFailure) -> Int {
        switch failure.code {
        case "connectTimeout", "headerTimeout": 2
        case "stalled": 5
        case "connectionRefused", "connectionReset", "truncatedBody", "networkError": 6
        case "diskFull": 9
        case "locked": 11
        case "destinationExists": 13
        case "unsafePath": 16
        case "fileSystem": 17
        case "dnsFailure": 19
        case "malformedResponse", "headersTooLarge", "invalidContentLength", "invalidChunk", "redirectRefused",
             "rangeMismatch", "lengthMismatch": 22
        case "tooManyRedirects": 23
        case "authenticationRefused": 24
        case "invalidArgument", "invalidURL", "unsupportedScheme", "notSupported": 28
        case "checksumMismatch": 32
        case "httpStatus":
            switch failure.httpStatus {
            case 404?: 3
            case 503?: 29
            default: 22
            }
        default: 1
        }
    }

    /// The hexadecimal bitfield: one bit per piece (the first piece in the top bit), set when
    /// the piece is wholly within the completed ranges.
    static func bitfield(_ ranges: [Range<Int64>], total: Int64) -> String {
        let pieces = Int((total + pieceLength - 1) / pieceLength)
        var bits = [UInt8](repeating: 0, count: (pieces + 7) / 8)
        let merged = merge(ranges)
        var cursor = 0
        for piece in 0..<pieces {
            let start = Int64(piece) * pieceLength, end = min(start + pieceLength, total)
            while cursor < merged.count, merged[cursor].upperBound <= start { cursor += 1 }
            if cursor < merged.count, merged[cursor].lowerBound <= start, merged[cursor].upperBound >= end {
                bits[piece / 8] |= 0x80 >> UInt8(piece % 8)
            }
        }
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(bits.count * 2)
        for byte in bits { text += [digits[Int(byte >> 4)], digits[Int(byte & 0xF)]] }
        return String(decoding: text, as: UTF8.self)
    }

    /// Sorted ranges with touching or overlapping ones joined.
    static func merge(_ ranges: [Range<Int64>]) -> [Range<Int64>] {
        var merged: [Range<Int64>] = []
        for range in ranges.sorted(by: { $0.lowerBound < $1.lowerBound }) where !range.isEmpty {
            if let last = merged.last, range.lowerBound <= last.upperBound {
                merged[merged.count - 1] = last.lowerBound..<max(last.upperBound, range.upperBound)
            } else {
                merged.append(range)
            }
        }
        return merged
    }
}
