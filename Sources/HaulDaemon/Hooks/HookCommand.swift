import Haul
import HaulService

/// What a hook runs for one download: the program, its arguments as aria2 gives them (GID, the
/// number of files, the path) and its environment (the daemon's, less its secrets, and the
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

    /// The daemon's variables a hook does not see: the secrets Haul reads (PostgreSQL's
    /// password, storage keys, proxies that may carry credentials) and `HAUL_*` (the facts').
    static let withheldVariables: Set<String> = ["PGPASSWORD", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",
                                                 "OSS_ACCESS_KEY_ID", "OSS_ACCESS_KEY_SECRET", "http_proxy", "https_proxy",
                                                 "all_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"]

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
            let name = String(line.unicodeScalars.prefix { $0 != "=" })
            return !Self.withheldVariables.contains(name) && !name.hasPrefix("HAUL_")
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
        return facts.map { ($0.0, capped($0.1.replacing("\u{0}", with: ""))) }
    }

    /// The longest value passed: the kernel refuses a variable over 128 KiB (a download with
    /// thousands of sources), and the hook would not run at all.
    static let valueLimit = 32 * 1024

    /// `value` cut to ``valueLimit`` bytes, at a scalar's boundary.
    static func capped(_ value: String) -> String {
        guard value.utf8.count > valueLimit else { return value }
        var kept = "", count = 0
        for scalar in value.unicodeScalars {
            count += String(scalar).utf8.count
            if count > valueLimit { break }
            kept.unicodeScalars.append(scalar)
        }
        return kept
    }
}
