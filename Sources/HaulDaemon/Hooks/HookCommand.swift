import Haul
import HaulService

/// What a hook runs for one download: the program, its arguments as aria2 gives them (GID, the
/// number of files, the path) and its environment (a few of the daemon's variables and the
/// download's facts as `HAUL_*`).
struct HookCommand: Sendable, Equatable {
    /// Which hook.
    enum Kind: String, Sendable {
        case complete = "on-complete"
        case error = "on-error"
    }

    var kind: Kind
    var id: DownloadID
    /// The program's path, then its arguments.
    var arguments: [String]
    /// `NAME=value` lines.
    var environment: [String]

    /// The daemon's variables a hook sees; the rest (`PGPASSWORD`, `AWS_SECRET_ACCESS_KEY`,
    /// proxy credentials, ...) stays in the daemon.
    static let passedVariables: Set<String> = ["PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "TZ", "TMPDIR",
                                               "XDG_RUNTIME_DIR", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"]

    /// The command for `download` that ended as `kind`.
    ///
    /// - Parameters:
    ///   - program: the hook's program (an absolute path).
    ///   - inherited: the daemon's environment as `NAME=value` lines.
    init(_ kind: Kind, program: String, download: ServiceDownload, inherited: [String]) {
        self.kind = kind
        id = download.id
        arguments = [program, download.id.hex, "1", download.filePath ?? ""]
        environment = inherited.filter { line in
            let name = String(line.prefix { $0 != "=" })
            return Self.passedVariables.contains(name) || name.hasPrefix("LC_")
        } + Self.facts(of: download).map { "\($0.0)=\($0.1)" }
    }

    /// The download's facts, as `(HAUL_NAME, value)`: what a script needs to file a result or
    /// report a failure, every URL with its secrets redacted.
    static func facts(of download: ServiceDownload) -> [(String, String)] {
        let urls = download.urls.map(DownloadRequest.redactedURL)
        var facts = [("HAUL_EVENT", download.status == .complete ? "complete" : "error"), ("HAUL_GID", download.id.hex),
                     ("HAUL_STATUS", download.status.rawValue), ("HAUL_PATH", download.filePath ?? ""),
                     ("HAUL_DIR", download.directoryPath), ("HAUL_SIZE", String(download.totalBytes ?? download.completedBytes)),
                     ("HAUL_URL", urls.first ?? ""), ("HAUL_SOURCES", urls.joined(separator: "\n"))]
        if let failure = download.failure {
            facts += [("HAUL_ERROR_CODE", failure.code), ("HAUL_EXIT_STATUS", String(failure.exitStatus)),
                      ("HAUL_ERROR_MESSAGE", failure.message)]
            if let status = failure.httpStatus { facts.append(("HAUL_HTTP_STATUS", String(status))) }
        }
        if let node = download.node { facts.append(("HAUL_NODE", node)) }
        return facts.map { ($0.0, $0.1.replacing("\u{0}", with: "")) }
    }
}
