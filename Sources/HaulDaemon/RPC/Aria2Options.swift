import Haul
import HaulService
import HaulJSON

/// The defaults for new downloads that aria2's global options set (`split`,
/// `max-connection-per-server`, `max-download-limit`), changed by `changeGlobalOption`.
struct Aria2Defaults: Sendable, Equatable {
    /// Connections per download.
    var connections: Int
    /// Each new download's own cap, `nil` for none.
    var downloadLimit: Int64?
}

/// aria2's options as strings, read into a download's options. Only the options Haul honours
/// are read; every other name is ignored, as aria2 ignores the options a context does not take,
/// so no option given over the RPC can name a file outside the download root (`log`,
/// `save-session`, `input-file`, `on-download-complete` and their kin do nothing here).
enum Aria2Options {
    /// What `addUri`'s options ask beyond the download's own options.
    struct Extras: Equatable {
        var paused = false
        var id: DownloadID?
    }

    /// Applies `dictionary` onto `options`; returns `pause` and `gid`.
    ///
    /// - Throws: aria2's words for a value it would refuse.
    static func apply(_ dictionary: JSONObject, to options: inout ServiceDownloadOptions) throws(RPCFault) -> Extras {
        var extras = Extras()
        var split: Int?, perServer: Int?
        for member in dictionary.members {
            if member.key == "header" {
                options.headers = try headers(member.value)
                continue
            }
            guard let text = member.value.string else { continue }   // aria2 ignores values that are not strings
            switch member.key {
            case "dir": options.directory = text
            case "out": options.fileName = text
            case "split": split = try integer(text, member.key, in: 1...Int.max)
            case "max-connection-per-server": perServer = try integer(text, member.key, in: 1...Int.max)
            case "max-download-limit": options.rateLimit = try size(text, member.key)
            case "checksum": options.checksum = try checksum(text)
            case "allow-overwrite": options.overwrite = try boolean(text, member.key)
            case "continue": options.continues = try boolean(text, member.key)
            case "pause": extras.paused = try boolean(text, member.key)
            case "gid":
                guard let id = DownloadID(hex: text) else { throw invalid("gid") }
                extras.id = id
            default: continue
            }
        }
        if let connections = [split, perServer].compactMap({ $0 }).min() { options.connections = min(16, connections) }
        return extras
    }

    /// aria2's and Haul's names for a program the daemon runs: refused from any call (a
    /// caller with the token must not make the daemon run a program).
    static let hookKeys: Set<String> = ["on-download-start", "on-download-pause", "on-download-stop", "on-download-complete",
                                        "on-download-error", "on-bt-download-complete", "on-complete", "on-error"]

    /// What `changeGlobalOption` asks of the service beyond the defaults for new downloads.
    struct GlobalChanges {
        /// `max-concurrent-downloads`.
        var maximumActive: Int?
        /// `max-overall-download-limit` (`.some(nil)`: no limit).
        var overallLimit: Int64??
        /// `haul-limit-schedule` (empty: none).
        var schedule: LimitSchedule?
    }

    /// Reads `changeGlobalOption`'s options: the queue size, the overall cap and the schedule go
    /// to the service, the per-download ones become defaults. Every value is read before any
    /// applies, so a call with one wrong value changes nothing.
    static func applyGlobal(_ dictionary: JSONObject, to defaults: inout Aria2Defaults) throws(RPCFault) -> GlobalChanges {
        var changes = GlobalChanges()
        for member in dictionary.members {
            guard let text = member.value.string else { continue }
            switch member.key {
            case "max-concurrent-downloads":
                changes.maximumActive = try integer(text, member.key, in: 1...DownloadService.activeDownloadsLimit)
            case "max-overall-download-limit": changes.overallLimit = .some(try size(text, member.key))
            case "split", "max-connection-per-server": defaults.connections = min(16, try integer(text, member.key, in: 1...Int.max))
            case "max-download-limit": defaults.downloadLimit = try size(text, member.key)
            case _ where hookKeys.contains(member.key):
                throw RPCFault.failure("\(member.key) cannot be set over RPC: the daemon's hooks come from its command line or config file")
            case "haul-limit-schedule":
                do throws(LimitSchedule.ParseError) {
                    changes.schedule = try LimitSchedule(parsing: text)
                } catch {
                    throw .failure("We encountered a problem while processing the option '--haul-limit-schedule': \(error)")
                }
            default: continue
            }
        }
        return changes
    }

    /// A download's options as aria2 shows them (`getOption`).
    static func json(_ download: ServiceDownload, defaults: Aria2Defaults) -> JSONValue {
        let options = download.options
        var object = JSONObject()
        object.append("allow-overwrite", .string(options.overwrite ? "true" : "false"))
        if let checksum = options.checksum { object.append("checksum", .string(checksumText(checksum))) }
        object.append("continue", .string(options.continues ? "true" : "false"))
        object.append("dir", .string(download.directoryPath))
        if !options.headers.isEmpty {
            object.append("header", .string(options.headers.map { "\($0.name): \($0.value)" }.joined(separator: "\n")))
        }
        let connections = String(options.connections ?? defaults.connections)
        object.append("max-connection-per-server", .string(connections))
        object.append("max-download-limit", .string(String(options.rateLimit ?? 0)))
        if let name = options.fileName { object.append("out", .string(name)) }
        object.append("split", .string(connections))
        return .object(object)
    }

    /// `sha-256=…` as aria2 spells it.
    static func checksumText(_ checksum: Checksum) -> String {
        let name = switch checksum.algorithm {
        case .sha256: "sha-256"
        case .sha512: "sha-512"
        case .sha1: "sha-1"
        case .md5: "md5"
        }
        return "\(name)=\(checksum.hex)"
    }

    static func invalid(_ name: String) -> RPCFault {
        .failure("We encountered a problem while processing the option '--\(name)'.")
    }

    static func integer(_ text: String, _ name: String, in range: ClosedRange<Int>) throws(RPCFault) -> Int {
        guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let value = Int(text), range.contains(value) else {
            throw invalid(name)
        }
        return value
    }

    static func boolean(_ text: String, _ name: String) throws(RPCFault) -> Bool {
        switch text {
        case "true": return true
        case "false": return false
        default: throw invalid(name)
        }
    }

    /// A speed like aria2's: bytes, or with `K` or `M` (1024-based); 0 means no cap (`nil`).
    static func size(_ text: String, _ name: String) throws(RPCFault) -> Int64? {
        var digits = Substring(text)
        var multiplier: Int64 = 1
        switch digits.last {
        case "K"?, "k"?: multiplier = 1 << 10
        case "M"?, "m"?: multiplier = 1 << 20
        default: break
        }
        if multiplier > 1 { digits = digits.dropLast() }
        guard !digits.isEmpty, digits.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let value = Int64(digits),
              value <= (1 << 40) / multiplier else { throw invalid(name) }
        return value == 0 ? nil : value * multiplier
    }

    static func checksum(_ text: String) throws(RPCFault) -> Checksum {
        do throws(DownloadError) {
            return try Checksum(parsing: text)
        } catch {
            throw invalid("checksum")
        }
    }

    /// `header`: one `Name: value` string or a list of them.
    static func headers(_ value: JSONValue) throws(RPCFault) -> [ServiceDownloadOptions.Header] {
        let texts: [String] = value.string.map { [$0] } ?? (value.array ?? []).compactMap(\.string)
        return try texts.map { (text) throws(RPCFault) in
            guard let colon = text.firstIndex(of: ":") else { throw invalid("header") }
            return .init(name: String(text[..<colon]), value: String(text[text.index(after: colon)...].trimmingSpaces()))
        }
    }
}
