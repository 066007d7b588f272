import Haul
import HaulCore

/// One download as its row in the state file: the entry's lasting fields, as text and numbers.
struct StoreRow: Equatable {
    var id: DownloadID
    var status: ServiceDownload.Status
    var position: Double
    var urls: [String]
    var options: ServiceDownloadOptions
    var file: String?
    var totalBytes: Int64?
    var completedBytes: Int64
    var completedRanges: [Range<Int64>]?
    var failure: ServiceFailure?

    /// The row of an entry as it is now.
    init(_ entry: ServiceQueue.Entry) {
        id = entry.id
        status = entry.status
        position = entry.position
        urls = entry.urls
        options = entry.options
        file = entry.file
        totalBytes = entry.totalBytes
        completedBytes = entry.completedBytes
        completedRanges = entry.completedRanges
        failure = entry.failure
    }

    /// The entry a row restores (no run, no speed).
    var entry: ServiceQueue.Entry {
        ServiceQueue.Entry(id: id, urls: urls, options: options, status: status, position: position, file: file,
                           totalBytes: totalBytes, completedBytes: completedBytes, completedRanges: completedRanges,
                           failure: failure)
    }
}

extension StoreRow {
    /// The row a store's columns hold (the fields as they are stored); `nil` for an identifier or
    /// status this code does not know.
    static func decoded(id: Int64?, status: String?, position: Double, urls: String?, options: String?, file: String?,
                        totalBytes: Int64?, completedBytes: Int64?, ranges: String?, failure: String?) -> StoreRow? {
        guard let id = DownloadID(rawValue: UInt64(bitPattern: id ?? 0)),
              let status = ServiceDownload.Status(rawValue: status ?? "") else { return nil }
        var entry = ServiceQueue.Entry(id: id, urls: (urls ?? "").split(separator: "\n").map(String.init),
                                       options: StoreText.decodeOptions(options ?? ""), status: status, position: position)
        entry.file = file
        entry.totalBytes = totalBytes
        entry.completedBytes = completedBytes ?? 0
        entry.completedRanges = ranges.flatMap(StoreText.decodeRanges)
        entry.failure = failure.map(StoreText.decodeFailure)
        return StoreRow(entry)
    }
}

/// The text forms of a row's fields: `key value` lines whose values escape `%`, CR and LF.
enum StoreText {
    /// `key value` lines.
    static func lines(_ fields: [(String, String)]) -> String {
        fields.map { "\($0.0) \(escape($0.1))" }.joined(separator: "\n")
    }

    /// The fields of `lines(_:)`'s text, in order; lines without a space are skipped.
    static func fields(_ text: String) -> [(String, String)] {
        text.split(separator: "\n").compactMap { line in
            guard let space = line.firstIndex(of: " ") else { return nil }
            return (String(line[..<space]), unescape(line[line.index(after: space)...]))
        }
    }

    static func escape(_ value: String) -> String {
        var escaped = String.UnicodeScalarView()
        for scalar in value.unicodeScalars {   // by scalars: "\r\n" is one Character
            switch scalar {
            case "%": escaped.append(contentsOf: "%25".unicodeScalars)
            case "\n": escaped.append(contentsOf: "%0A".unicodeScalars)
            case "\r": escaped.append(contentsOf: "%0D".unicodeScalars)
            default: escaped.append(scalar)
            }
        }
        return String(escaped)
    }

    static func unescape(_ value: Substring) -> String {
        var text = ""
        var rest = value[...]
        while let percent = rest.firstIndex(of: "%") {
            text += rest[..<percent]
            let code = rest[percent...].prefix(3)
            switch code {
            case "%25": text += "%"
            case "%0A": text += "\n"
            case "%0D": text += "\r"
            default: text += code
            }
            rest = rest[code.endIndex...]
        }
        return text + rest
    }

    /// The options as lines.
    static func encode(_ options: ServiceDownloadOptions) -> String {
        var fields: [(String, String)] = [("dir", options.directory)]
        if let name = options.fileName { fields.append(("out", name)) }
        for header in options.headers { fields.append(("header", "\(header.name): \(header.value)")) }
        if let connections = options.connections { fields.append(("connections", String(connections))) }
        if let rate = options.rateLimit { fields.append(("rate", String(rate))) }
        if let checksum = options.checksum { fields.append(("checksum", checksum.description)) }
        if let pieces = options.pieces { fields.append(("pieces", encode(pieces))) }
        if options.overwrite { fields.append(("overwrite", "1")) }
        if !options.continues { fields.append(("continue", "0")) }
        return lines(fields)
    }

    /// The options of `encode(_:)`'s text; unknown or damaged fields are left out.
    static func decodeOptions(_ text: String) -> ServiceDownloadOptions {
        var options = ServiceDownloadOptions()
        for (key, value) in fields(text) {
            switch key {
            case "dir": options.directory = value
            case "out": options.fileName = value
            case "header":
                guard let colon = value.firstIndex(of: ":") else { continue }
                let rest = value[value.index(after: colon)...]
                options.headers.append(.init(name: String(value[..<colon]), value: String(rest.drop { $0 == " " })))
            case "connections": options.connections = Int(value)
            case "rate": options.rateLimit = Int64(value)
            case "checksum": options.checksum = try? Checksum(parsing: value)
            case "pieces": options.pieces = pieces(value)
            case "overwrite": options.overwrite = value == "1"
            case "continue": options.continues = value != "0"
            default: continue
            }
        }
        return options
    }

    /// Piece checksums as `LENGTH ALGORITHM HEX,HEX,...`.
    static func encode(_ pieces: PieceChecksums) -> String {
        "\(pieces.length) \(pieces.algorithm.rawValue) " + pieces.digests.map { Hex.encode($0) }.joined(separator: ",")
    }

    /// The piece checksums of `encode(_:)`'s text; `nil` when damaged.
    static func pieces(_ text: String) -> PieceChecksums? {
        let parts = text.utf8.split(separator: UInt8(ascii: " "))
        guard parts.count == 3, let length = Int64(String(decoding: parts[0], as: UTF8.self)),
              let algorithm = ChecksumAlgorithm(rawValue: String(decoding: parts[1], as: UTF8.self)) else { return nil }
        var digests: [[UInt8]] = []
        for hex in parts[2].split(separator: UInt8(ascii: ",")) {
            guard let digest = Hex.decode(String(decoding: hex, as: UTF8.self)) else { return nil }
            digests.append(digest)
        }
        return try? PieceChecksums(length: length, algorithm: algorithm, digests: digests)
    }

    /// A failure as lines.
    static func encode(_ failure: ServiceFailure) -> String {
        var fields = [("code", failure.code), ("exit", String(failure.exitStatus)), ("message", failure.message)]
        if let status = failure.httpStatus { fields.append(("http", String(status))) }
        return lines(fields)
    }

    /// The failure of `encode(_:)`'s text.
    static func decodeFailure(_ text: String) -> ServiceFailure {
        var failure = ServiceFailure(code: "internalError", exitStatus: 1, message: "")
        for (key, value) in fields(text) {
            switch key {
            case "code": failure.code = value
            case "exit": failure.exitStatus = Int32(value) ?? 1
            case "message": failure.message = value
            case "http": failure.httpStatus = Int(value)
            default: continue
            }
        }
        return failure
    }

    /// Ranges as `first-end` pairs (end exclusive), comma separated.
    static func encode(_ ranges: [Range<Int64>]) -> String {
        ranges.map { "\($0.lowerBound)-\($0.upperBound)" }.joined(separator: ",")
    }

    /// The ranges of `encode(_:)`'s text; `nil` when damaged.
    static func decodeRanges(_ text: String) -> [Range<Int64>]? {
        if text.isEmpty { return [] }
        var ranges: [Range<Int64>] = []
        for pair in text.split(separator: ",") {
            let ends = pair.split(separator: "-")
            guard ends.count == 2, let low = Int64(ends[0]), let high = Int64(ends[1]), low <= high else { return nil }
            ranges.append(low..<high)
        }
        return ranges
    }
}
