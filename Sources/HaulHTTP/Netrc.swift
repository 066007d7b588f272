import HaulCore

/// A user name and password for Basic authentication.
package struct BasicCredentials: Sendable, Hashable {
    package var user: String
    package var password: String

    package init(user: String, password: String) {
        self.user = user
        self.password = password
    }

    /// The `Authorization` value: `Basic base64(user:password)`.
    package var authorization: String { "Basic " + Base64.encode(Array("\(user):\(password)".utf8)) }

    /// The credentials a request to `url` carries, chosen per hop.
    ///
    /// On the original origin: the URL's userinfo first (a user without a password takes that
    /// user's password from netrc), then `explicit` (`-u`), then netrc. After a redirect to
    /// another origin, netrc alone, looked up for the new host: nothing of the original's
    /// credentials follows.
    ///
    /// - Parameters:
    ///   - url: the hop's URL (its userinfo is kept only while on the original origin).
    ///   - onOriginalOrigin: whether the chain has not left the original origin.
    ///   - explicit: credentials given for the original origin.
    ///   - netrc: the netrc entries, if any.
    package static func forRequest(to url: HTTPURL, onOriginalOrigin: Bool, explicit: BasicCredentials?,
                                   netrc: Netrc?) -> BasicCredentials? {
        if onOriginalOrigin {
            if let user = url.user {
                let password = url.password ?? netrc?.credentials(forHost: url.host, login: user)?.password ?? ""
                return BasicCredentials(user: user, password: password)
            }
            if let explicit { return explicit }
        }
        return netrc?.credentials(forHost: url.host)
    }
}

/// The entries of a `.netrc` file, parsed as curl and ftp(1) read it.
///
/// Tokens are separated by blanks, tabs and line ends (LF or CRLF; the last line needs none):
/// `machine NAME` starts an entry, `default` starts the entry for any other host (it applies
/// only when no `machine` matches), `login`, `password` and `account` take a value, `macdef NAME`
/// is skipped with the lines after it up to an empty line. A value may be a quoted string with
/// `\"`, `\\`, `\n`, `\r` and `\t` escapes. A line whose first token starts with `#` is a
/// comment. Anything else is skipped, so hostile input never fails the parse: at worst it yields
/// no entry.
package struct Netrc: Sendable, Hashable {
    /// One `machine` (or `default`) entry.
    package struct Entry: Sendable, Hashable {
        /// The lowercased host, `nil` for `default`.
        package var machine: String?
        package var login: String?
        package var password: String?
    }

    /// The entries in file order.
    package private(set) var entries: [Entry] = []

    /// Parses the text of a netrc file.
    package init(parsing text: String) {
        var tokens = NetrcTokenizer(Array(text.utf8))
        var current: Entry?
        while let token = tokens.next() {
            switch token {
            case "machine", "default":
                if let current { entries.append(current) }
                current = Entry(machine: token == "default" ? nil : (tokens.next() ?? "").lowercased())
            case "login": let value = tokens.next(); if current != nil { current?.login = value }
            case "password": let value = tokens.next(); if current != nil { current?.password = value }
            case "account": _ = tokens.next()
            case "macdef": _ = tokens.next(); tokens.skipMacro()
            default: break
            }
        }
        if let current { entries.append(current) }
    }

    /// The credentials for `host`, all from one entry.
    ///
    /// The first `machine` entry naming `host` (case-insensitively) answers, and only if none
    /// does, the `default` entry. With `login` (the URL named a user) only an entry for that
    /// user answers, with its password. An entry without a login gives nothing; one without a
    /// password gives an empty one. Nothing is ever taken from another entry.
    ///
    /// - Parameters:
    ///   - host: the URL's host.
    ///   - login: the user the URL names, if any.
    package func credentials(forHost host: String, login: String? = nil) -> BasicCredentials? {
        let host = host.lowercased()
        let machines = entries.filter { $0.machine == host }
        let candidates = machines.isEmpty ? entries.filter { $0.machine == nil } : machines
        for entry in candidates {
            guard let user = entry.login else { continue }
            if let login, user != login { continue }
            return BasicCredentials(user: user, password: entry.password ?? "")
        }
        return nil
    }
}

/// Splits netrc text into tokens, with quoted strings, comments and macro bodies.
private struct NetrcTokenizer {
    private let bytes: [UInt8]
    private var index = 0

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    private static func isBlank(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0D || byte == 0x0A }

    /// Whether no token came yet on the current line (a `#` there starts a comment).
    private var atLineStart = true

    mutating func next() -> String? {
        while true {
            while index < bytes.count, Self.isBlank(bytes[index]) {
                if bytes[index] == 0x0A { atLineStart = true }
                index += 1
            }
            guard index < bytes.count else { return nil }
            if bytes[index] == UInt8(ascii: "#"), atLineStart {
                skipLine()
                continue
            }
            atLineStart = false
            return bytes[index] == UInt8(ascii: "\"") ? quoted() : plain()
        }
    }

    private mutating func plain() -> String {
        let start = index
        while index < bytes.count, !Self.isBlank(bytes[index]) { index += 1 }
        return String(decoding: bytes[start..<index], as: UTF8.self)
    }

    private mutating func quoted() -> String {
        index += 1
        var value: [UInt8] = []
        while index < bytes.count, bytes[index] != UInt8(ascii: "\"") {
            var byte = bytes[index]
            if byte == UInt8(ascii: "\\"), index + 1 < bytes.count {
                index += 1
                switch bytes[index] {
                case UInt8(ascii: "n"): byte = 0x0A
                case UInt8(ascii: "r"): byte = 0x0D
                case UInt8(ascii: "t"): byte = 0x09
                default: byte = bytes[index]
                }
            }
            value.append(byte)
            index += 1
        }
        if index < bytes.count { index += 1 }   // the closing quote (an unclosed one ends at the end)
        return String(decoding: value, as: UTF8.self)
    }

    private mutating func skipLine() {
        while index < bytes.count, bytes[index] != 0x0A { index += 1 }
        if index < bytes.count { index += 1 }
        atLineStart = true
    }

    /// Skips the rest of the `macdef` line, then every line up to and including an empty one.
    mutating func skipMacro() {
        skipLine()
        while index < bytes.count {
            let start = index
            skipLine()
            let line = bytes[start..<index].filter { $0 != 0x0A && $0 != 0x0D }
            if line.isEmpty { return }
        }
    }
}
