import Testing
@testable import HaulHTTP

/// ``Netrc``: tokens, quoting, macros, default, and lookups that never mix entries.
@Suite("netrc parsing")
struct NetrcTests {
    func lookup(_ text: String, _ host: String, login: String? = nil) -> String? {
        Netrc(parsing: text).credentials(forHost: host, login: login).map { "\($0.user):\($0.password)" }
    }

    @Test("machine, login and password, on one line or many")
    func basic() {
        #expect(lookup("machine a.test login alice password s3cret", "a.test") == "alice:s3cret")
        #expect(lookup("machine a.test\n  login alice\n  password s3cret\n", "A.TEST") == "alice:s3cret")
        #expect(lookup("machine a.test login alice password s3cret", "b.test") == nil)
    }

    @Test("CRLF, tabs and no final newline")
    func lineEnds() {
        #expect(lookup("machine a.test\r\n\tlogin alice\r\n\tpassword pw", "a.test") == "alice:pw")
    }

    @Test("quoted values with escapes")
    func quoted() {
        #expect(lookup(#"machine a.test login "al ice" password "p\"w\\d\n""#, "a.test") == "al ice:p\"w\\d\n")
        #expect(lookup(#"machine a.test login a password "unterminated"#, "a.test") == "a:unterminated")
    }

    @Test("default applies only when no machine matches, wherever it is")
    func defaultEntry() {
        let text = "default login anon password guest\nmachine a.test login alice password pw"
        #expect(lookup(text, "a.test") == "alice:pw")
        #expect(lookup(text, "other.test") == "anon:guest")
    }

    @Test("macdef bodies are skipped up to an empty line")
    func macdef() {
        let text = "macdef init\nmachine evil.test login mallory password x\ncd /\n\nmachine a.test login alice password pw"
        #expect(lookup(text, "evil.test") == nil)
        #expect(lookup(text, "a.test") == "alice:pw")
        #expect(lookup("machine a.test login alice password pw macdef m\nmachine b.test login b password b", "b.test") == nil)
    }

    @Test("comments and account are skipped")
    func comments() {
        #expect(lookup("# machine a.test login no password no\nmachine a.test account x login alice password pw", "a.test") == "alice:pw")
    }

    @Test("a URL's user takes only that user's password")
    func userFromURL() {
        let text = "machine a.test login alice password pa\nmachine a.test login bob password pb"
        #expect(lookup(text, "a.test", login: "bob") == "bob:pb")
        #expect(lookup(text, "a.test", login: "carol") == nil)
        // The host has entries, none for carol: the default's carol is not used either.
        #expect(lookup(text + "\ndefault login carol password pc", "a.test", login: "carol") == nil)
    }

    @Test("nothing from one entry is merged into another")
    func noMerging() {
        // a.test has no password: its own entry gives an empty one, never the default's.
        #expect(lookup("machine a.test login alice\ndefault login anon password guest", "a.test") == "alice:")
        // A partial default (no login) gives nothing.
        #expect(lookup("default password guest", "a.test") == nil)
        // Tokens before any machine belong to no entry.
        #expect(lookup("login stray password stray\nmachine a.test", "a.test") == nil)
    }

    @Test("hostile input never crashes and yields no surprise entry", arguments: [
        "", "machine", "machine a.test login", "\"", "\"\\", "machine \"a.test\" login \"", String(repeating: "machine ", count: 10_000),
        "\0\0\0", "macdef", "macdef x", "machine a.test password", "default default default",
        String(repeating: "\"", count: 1001), "machine a.test login \u{FF}\u{FE} password \u{1F600}",
    ])
    func hostile(_ text: String) {
        let netrc = Netrc(parsing: text)
        #expect(netrc.credentials(forHost: "other.test") == nil || text.contains("default"))
    }
}

/// Sizes a fuzzer would try: the parse stays linear.
@Suite("netrc parsing, large inputs")
struct NetrcLargeInputTests {
    @Test("a long line of '#' tokens is no comment and parses quickly")
    func manyHashes() {
        let text = "machine a.test login alice password pw " + String(repeating: "x #", count: 200_000)
        let started = ContinuousClock.now
        #expect(Netrc(parsing: text).credentials(forHost: "a.test")?.user == "alice")
        #expect(ContinuousClock.now - started < .seconds(5))
    }
}
