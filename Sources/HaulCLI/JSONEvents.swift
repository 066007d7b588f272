import Haul
import HaulJSON

/// The `--json` events, one object per line on standard output (each case shows its object;
/// README.md's "The command line" lists them).
enum JSONEvent: Sendable {
    /// `{"event":"started","id":…,"url":…,"file":…,"total":…,"resumedFrom":…,"connections":…}`, plus
    /// `"servers":N` when several servers may send the file.
    case started(id: String, url: String, file: String, total: Int64?, resumedFrom: Int64, connections: Int, servers: Int = 1)
    /// `{"event":"progress","id":…,"bytes":…,"total":…,"speed":…,"eta":…}`, plus
    /// `"sources":[{"url":…,"bytes":…,"connections":…,"setAside":…}]` while several servers send
    /// the file (`setAside`, the reason, only for a server set aside).
    case progress(id: String, bytes: Int64, total: Int64?, speed: Double, eta: Double?, sources: [SourceInUse] = [])
    /// `{"event":"retrying","id":…,"attempt":…,"delay":…,"error":{"code":…,"message":…}}`
    case retrying(id: String, attempt: Int, delay: Double, error: DownloadError)
    /// `{"event":"finished","id":…,"file":…,"bytes":…}` plus `"sha256"` when computed and
    /// `"skipped":true` when the file existed and `--on-conflict=skip` kept it,
    /// `"alreadyComplete":true` when an earlier run finished the file (nothing downloaded), and
    /// `"sources":[{"url":…,"bytes":…,"setAside":…}]` when several servers sent it (`setAside`,
    /// the reason, only for a server set aside).
    case finished(id: String, file: String, bytes: Int64, sha256: String?, skipped: Bool, alreadyComplete: Bool = false,
                  sources: [SourceReport] = [])
    /// `{"event":"warning","id":…,"message":…}`: something the user should know (clock skew,
    /// partial bytes that changed on disk); the download goes on.
    case warning(id: String, message: String)
    /// `{"event":"described","id":…,"metalink":…}`: with `--metalink=follow`, the download gave way
    /// to the Metalink document its server names (URL redacted); the document's files follow.
    case described(id: String, metalink: String)
    /// `{"event":"failed","id":…,"exitCode":…,"error":{"code":…,"message":…},"partial":…}`
    case failed(id: String, exitCode: Int32, error: DownloadError, partial: String?)

    /// The event as one line of JSON, ending with a newline.
    var line: String { JSONWriter.text(value) + "\n" }

    /// The event as a JSON object.
    var value: JSONValue {
        switch self {
        case let .started(id, url, file, total, resumedFrom, connections, servers):
            var members: [(String, JSONValue)] = [
                ("event", .string("started")), ("id", .string(id)), ("url", .string(url)),
                ("file", .string(file)), ("total", total.map { .integer($0) } ?? .null),
                ("resumedFrom", .integer(resumedFrom)), ("connections", .integer(Int64(connections))),
            ]
            if servers > 1 { members.append(("servers", .integer(Int64(servers)))) }
            return .object(members)
        case let .progress(id, bytes, total, speed, eta, sources):
            var members: [(String, JSONValue)] = [
                ("event", .string("progress")), ("id", .string(id)), ("bytes", .integer(bytes)),
                ("total", total.map { .integer($0) } ?? .null), ("speed", .double(speed)),
                ("eta", eta.map(JSONValue.double) ?? .null),
            ]
            if sources.count > 1 { members.append(("sources", .array(sources.map(Self.sourceObject)))) }
            return .object(members)
        case let .retrying(id, attempt, delay, error):
            return .object([
                ("event", .string("retrying")), ("id", .string(id)), ("attempt", .integer(Int64(attempt))),
                ("delay", .double(delay)), ("error", Self.errorObject(error)),
            ])
        case let .finished(id, file, bytes, sha256, skipped, alreadyComplete, sources):
            var members: [(String, JSONValue)] = [
                ("event", .string("finished")), ("id", .string(id)), ("file", .string(file)), ("bytes", .integer(bytes)),
            ]
            if let sha256 { members.append(("sha256", .string(sha256))) }
            if skipped { members.append(("skipped", .bool(true))) }
            if alreadyComplete { members.append(("alreadyComplete", .bool(true))) }
            if !sources.isEmpty { members.append(("sources", .array(sources.map(Self.sourceObject)))) }
            return .object(members)
        case let .described(id, metalink):
            return .object([("event", .string("described")), ("id", .string(id)), ("metalink", .string(metalink))])
        case let .warning(id, message):
            return .object([("event", .string("warning")), ("id", .string(id)), ("message", .string(message))])
        case let .failed(id, exitCode, error, partial):
            return .object([
                ("event", .string("failed")), ("id", .string(id)), ("exitCode", .integer(Int64(exitCode))),
                ("error", Self.errorObject(error)), ("partial", partial.map(JSONValue.string) ?? .null),
            ])
        }
    }

    /// `{"url":…,"bytes":…}` with `"setAside":REASON` for a server set aside.
    private static func sourceObject(_ source: SourceReport) -> JSONValue {
        var members: [(String, JSONValue)] = [("url", .string(source.url)), ("bytes", .integer(source.bytes))]
        if let reason = source.setAsideReason { members.append(("setAside", .string(reason))) }
        return .object(members)
    }

    /// `{"url":…,"bytes":…,"connections":…}` with `"setAside":REASON` for a server set aside.
    private static func sourceObject(_ source: SourceInUse) -> JSONValue {
        var members: [(String, JSONValue)] = [("url", .string(source.url)), ("bytes", .integer(source.bytes)),
                                              ("connections", .integer(Int64(source.connections)))]
        if let reason = source.setAsideReason { members.append(("setAside", .string(reason))) }
        return .object(members)
    }

    private static func errorObject(_ error: DownloadError) -> JSONValue {
        .object([("code", .string(error.code.name)), ("message", .string(error.message))])
    }
}
