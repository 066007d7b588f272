#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Where a service's list lives in PostgreSQL: a libpq connection string (`postgresql://…` or
/// `key=value` words) whose password, if the server asks for one, comes from libpq's usual
/// places (`PGPASSWORD`, `PGPASSFILE`, `~/.pgpass`), never from the string itself: a string on
/// a command line is visible to every user in `ps`.
public struct PostgresSettings: Sendable, Equatable {
    /// The connection string as given.
    public let connectionString: String
    /// The server, port, database and user, without anything secret: what messages show.
    public let redacted: String
    /// What libpq is given: the string with a connect timeout of 10 s unless it (or
    /// `PGCONNECT_TIMEOUT`) sets one, so that an unreachable server never holds a node forever.
    let effectiveConnectionString: String

    /// Whether `text` is a PostgreSQL URL (`postgresql://` or `postgres://`, any case).
    public static func isURL(_ text: String) -> Bool {
        let scheme = text.unicodeScalars.prefix { $0 != ":" }
        guard text.unicodeScalars.dropFirst(scheme.count).starts(with: "://".unicodeScalars) else { return false }
        let lowered = String(String.UnicodeScalarView(scheme)).lowercased()
        return lowered == "postgresql" || lowered == "postgres"
    }

    /// Checks a connection string with libpq's own parser.
    ///
    /// - Throws: `invalidArgument` for a string libpq cannot parse or one that holds a
    ///   password; `store` when libpq is not installed.
    public init(_ connectionString: String) throws(ServiceError) {
        let words = try Self.parse(connectionString)
        if let password = words["password"], !password.isEmpty {
            throw ServiceError(.invalidArgument, "the PostgreSQL connection string holds a password; give it in PGPASSWORD, "
                               + "a PGPASSFILE or ~/.pgpass instead, where ps cannot show it")
        }
        self.connectionString = connectionString
        effectiveConnectionString = Self.withConnectTimeout(connectionString, words: words)
        let host = words["host"].flatMap { $0.isEmpty ? nil : $0 } ?? words["hostaddr"] ?? "the default socket"
        redacted = "host=\(host) port=\(words["port"] ?? "5432") dbname=\(words["dbname"] ?? words["user"] ?? "")"
            + (words["user"].map { " user=\($0)" } ?? "")
    }

    private static func withConnectTimeout(_ text: String, words: [String: String]) -> String {
        let environment = ProcessInfo.processInfo.environment["PGCONNECT_TIMEOUT"]
        guard words["connect_timeout"] == nil, environment == nil else { return text }
        guard isURL(text) else { return text + " connect_timeout=10" }
        return text + (text.unicodeScalars.contains("?") ? "&" : "?") + "connect_timeout=10"
    }

    /// The keywords libpq reads from `connectionString` and their values (those it sets).
    static func parse(_ connectionString: String) throws(ServiceError) -> [String: String] {
        let library = try LibPQ.system.get()
        var message: UnsafeMutablePointer<CChar>?
        guard let options = library.conninfoParse(connectionString, &message) else {
            let reason = PostgresConnection.trimmed(message)
            library.freemem(message.map { UnsafeMutableRawPointer($0) })
            throw ServiceError(.invalidArgument, "the PostgreSQL connection string is not valid: \(reason)")
        }
        defer { library.conninfoFree(options) }
        // PQconninfoOption: char *keyword, *envvar, *compiled, *val, *label, *dispchar; int dispsize.
        let pointer = MemoryLayout<UnsafeRawPointer>.stride
        let stride = 6 * pointer + MemoryLayout<Int>.stride
        var words: [String: String] = [:]
        var offset = 0
        while let keyword = options.load(fromByteOffset: offset, as: UnsafePointer<CChar>?.self) {
            if let value = options.load(fromByteOffset: offset + 3 * pointer, as: UnsafePointer<CChar>?.self) {
                words[String(cString: keyword)] = String(cString: value)
            }
            offset += stride
        }
        return words
    }
}
