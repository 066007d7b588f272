import HaulTestSupport
import Testing
@testable import HaulHTTP
import HaulCore

/// ``DuplicateLinks``: RFC 6249's mirrors and Metalink description, ordered, capped, and never
/// less safe than the response they came with.
@Suite struct DuplicateLinksTests {
    /// The mirrors and description `fields` name for a response from `url`.
    static func pick(_ url: String, _ fields: String...) throws -> DuplicateLinks {
        DuplicateLinks(fieldValues: fields, responseURL: try HTTPURL.parse(url))
    }

    /// The hosts of the mirrors, in order.
    static func hosts(_ links: DuplicateLinks) -> [String] { links.mirrors.map(\.url.host) }

    @Test("RFC 6249 §1.1: one http mirror, the ftp one set aside, the Metalink description among other descriptions")
    func rfc6249Overview() throws {
        let links = try Self.pick("http://example.com/example.ext",
                                  "<http://www2.example.com/example.ext>; rel=duplicate",
                                  "<ftp://ftp.example.com/example.ext>; rel=duplicate",
                                  #"<http://example.com/example.ext.torrent>; rel=describedby; type="application/x-bittorrent""#,
                                  #"<http://example.com/example.ext.meta4>; rel=describedby; type="application/metalink4+xml""#,
                                  #"<http://example.com/example.ext.asc>; rel=describedby; type="application/pgp-signature""#)
        #expect(links.mirrors.map(\.url.stringWithoutUserinfo) == ["http://www2.example.com/example.ext"])
        #expect(links.mirrors.first == DuplicateLinks.Mirror(url: try HTTPURL.parse("http://www2.example.com/example.ext"),
                                                             priority: 999_999, isPreferred: false, country: nil, depth: nil))
        #expect(links.metalink?.stringWithoutUserinfo == "http://example.com/example.ext.meta4")
        #expect(links.dropped.map(\.reason) == [.unsupportedScheme])
        #expect(links.dropped.first?.description == "mirror ftp://ftp.example.com/example.ext ignored: not an http or https URL")
    }

    @Test("RFC 6249 §3: pri, pref, geo and depth are read")
    func rfc6249Parameters() throws {
        let links = try Self.pick("http://example.com/dir1/dir2/dir3/dir4/dir5/example.ext",
                                  "<http://www2.example.com/dir1/dir2/dir3/dir4/dir5/example.ext>; rel=duplicate; pri=1; pref; geo=gb; depth=4",
                                  "<http://www3.example.com/dir1/dir2/example.ext>; rel=duplicate; pri=2; geo=ZA; depth=1")
        #expect(links.mirrors == [
            .init(url: try HTTPURL.parse("http://www2.example.com/dir1/dir2/dir3/dir4/dir5/example.ext"), priority: 1,
                  isPreferred: true, country: "gb", depth: 4),
            .init(url: try HTTPURL.parse("http://www3.example.com/dir1/dir2/example.ext"), priority: 2, isPreferred: false,
                  country: "za", depth: 1),
        ])
        #expect(links.dropped.isEmpty && links.metalink == nil)
    }

    @Test("a MirrorBrain answer: mirrors by pri with their countries, torrent and signature ignored, ftp set aside")
    func mirrorBrain() throws {
        let file = "/pub/distribution/12.1/iso/distribution-12.1-DVD-x86_64.iso"
        let links = try Self.pick("http://download.example.org" + file,
                                  #"<http://download.example.org\#(file).meta4>; rel=describedby; type="application/metalink4+xml""#,
                                  #"<http://download.example.org\#(file).torrent>; rel=describedby; type="application/x-bittorrent""#,
                                  "<http://ftp.example.de/mirror/example\(file)>; rel=duplicate; pri=1; geo=de",
                                  "<http://ftp.uni.example.de/example\(file)>; rel=duplicate; pri=2; geo=de",
                                  "<ftp://ftp.example.pt/pub/example\(file)>; rel=duplicate; pri=3; geo=pt",
                                  "<http://mirror.example.nl/example\(file)>; rel=duplicate; pri=5; geo=nl",
                                  "<http://mirrors.example.us/pub/example\(file)>; rel=duplicate; pri=4; geo=us")
        #expect(Self.hosts(links) == ["ftp.example.de", "ftp.uni.example.de", "mirrors.example.us", "mirror.example.nl"])
        #expect(links.mirrors.map(\.country) == ["de", "de", "us", "nl"])
        #expect(links.mirrors.map(\.priority) == [1, 2, 4, 5])
        #expect(links.metalink?.path == file + ".meta4")
        #expect(links.dropped.map(\.reason) == [.unsupportedScheme])
    }

    @Test("ordering: pref first, then pri, then the order of the fields")
    func ordering() throws {
        let links = try Self.pick("https://origin.example/f",
                                  "<https://a.example/f>; rel=duplicate; pri=5, <https://b.example/f>; rel=duplicate; pri=1",
                                  "<https://c.example/f>; rel=duplicate; pri=9; pref, <https://d.example/f>; rel=duplicate",
                                  "<https://e.example/f>; rel=duplicate; pri=1, <https://f.example/f>; rel=duplicate; pref")
        #expect(Self.hosts(links) == ["c.example", "f.example", "b.example", "e.example", "a.example", "d.example"])
    }

    @Test("an invalid pri counts as the default, 999999", arguments: [
        ("pri=0", 999_999), ("pri=1000000", 999_999), ("pri=-3", 999_999), ("pri=abc", 999_999), ("pri=", 999_999),
        ("pri=1.5", 999_999), ("pri=99999999999999999999", 999_999), ("pri", 999_999), ("title=x", 999_999),
        (#"pri="42""#, 42), ("pri=999999", 999_999), ("pri=1", 1), ("PRI=007", 7),
    ])
    func priorities(_ parameter: String, expected: Int) throws {
        let links = try Self.pick("https://origin.example/f", "<https://m.example/f>; rel=duplicate; \(parameter)")
        #expect(links.mirrors.map(\.priority) == [expected])
    }

    @Test("geo is two letters, lowercased; depth a number", arguments: [
        ("geo=DE; depth=0", "de", 0), ("geo=deu; depth=-1", nil, nil), ("geo=1a; depth=x", nil, nil),
        (#"geo=" us "; depth=12"#, "us", 12), ("geo=\u{E9}e", nil, nil),
    ] as [(String, String?, Int?)])
    func countryAndDepth(_ parameters: String, country: String?, depth: Int?) throws {
        let links = try Self.pick("https://origin.example/f", "<https://m.example/f>; rel=duplicate; \(parameters)")
        #expect(links.mirrors.map(\.country) == [country])
        #expect(links.mirrors.map(\.depth) == [depth])
    }

    @Test("an http mirror is refused under an https response, kept under an http one")
    func neverDowngrades() throws {
        let fields = ["<http://plain.example/f?token=abc>; rel=duplicate", "<https://secure.example/f>; rel=duplicate",
                      "<//relative.example/f>; rel=duplicate"]
        let secure = DuplicateLinks(fieldValues: fields, responseURL: try HTTPURL.parse("https://origin.example/f"))
        #expect(Self.hosts(secure) == ["secure.example", "relative.example"])
        #expect(secure.mirrors.allSatisfy { $0.url.scheme == .https })
        #expect(secure.dropped.map(\.reason) == [.downgrade])
        #expect(secure.dropped.first?.description
            == "mirror http://plain.example/f?token=REDACTED ignored: http under an https download (never downgraded)")
        let plain = DuplicateLinks(fieldValues: fields, responseURL: try HTTPURL.parse("http://origin.example/f"))
        #expect(Self.hosts(plain) == ["plain.example", "secure.example", "relative.example"])
        #expect(plain.dropped.isEmpty)
    }

    @Test("a link to the response's own URL is dropped, however it is written", arguments: [
        "file.iso", "https://EXAMPLE.com:443/dir/file.iso#part", "./file.iso", "/dir/../dir/file.iso", "",
    ])
    func selfLinkDropped(_ reference: String) throws {
        let links = try Self.pick("https://example.com/dir/file.iso", "<\(reference)>; rel=duplicate, <../m/file.iso>; rel=duplicate")
        #expect(links.mirrors.map(\.url.stringWithoutUserinfo) == ["https://example.com/m/file.iso"])
        #expect(links.dropped.map(\.reason) == [.sameAsResponse])
    }

    @Test("a mirror named twice is kept once, at its first place")
    func repeatedMirror() throws {
        let links = try Self.pick("https://origin.example/f",
                                  "<https://a.example/f>; rel=duplicate; pri=9, <https://b.example/f>; rel=duplicate; pri=5",
                                  "<https://A.example:443/f>; rel=duplicate; pri=1")
        #expect(Self.hosts(links) == ["b.example", "a.example"])
        #expect(links.mirrors.map(\.priority) == [5, 9])
        #expect(links.dropped.map(\.reason) == [.repeated])
        #expect(links.dropped.map(\.position) == [2])
    }

    @Test("at most maximumMirrorCount mirrors stay: the best ones")
    func cap() throws {
        let fields = (1...15).map { "<https://m\($0).example/f>; rel=duplicate; pri=\(16 - $0)" }
        let links = DuplicateLinks(fieldValues: fields, responseURL: try HTTPURL.parse("https://origin.example/f"))
        #expect(links.mirrors.count == DuplicateLinks.maximumMirrorCount)
        #expect(Self.hosts(links) == (6...15).reversed().map { "m\($0).example" })
        #expect(links.dropped.map(\.reason) == Array(repeating: .beyondLimit, count: 5))
        #expect(links.dropped.map(\.position) == [0, 1, 2, 3, 4])
        #expect(links.dropped.first?.description == "mirror https://m1.example/f ignored: more than 10 mirrors")
    }

    @Test("a mirror that names a user or password is dropped, and its message does not show them")
    func credentialsDropped() throws {
        let links = try Self.pick("https://origin.example/f",
                                  "<https://user:secret@m.example/f>; rel=duplicate, <//who@n.example/f>; rel=duplicate",
                                  "<https://ok.example/f>; rel=duplicate")
        #expect(Self.hosts(links) == ["ok.example"])
        #expect(links.dropped.map(\.reason) == [.credentials, .credentials])
        #expect(links.dropped.allSatisfy { !$0.description.contains("secret") && !$0.description.contains("who") })
    }

    @Test("a mirror relative to a response URL with a user does not carry that user")
    func inheritedUserinfoIsNotKept() throws {
        let links = try Self.pick("https://user:secret@origin.example/a/f", "<../b/f>; rel=duplicate")
        #expect(links.mirrors.map(\.url.stringWithoutUserinfo) == ["https://origin.example/b/f"])
        #expect(links.mirrors.first?.url.user == nil && links.mirrors.first?.url.password == nil)
    }

    @Test("an anchor naming the response itself is fine; one naming another resource drops the link")
    func anchors() throws {
        let links = try Self.pick("https://origin.example/dir/f",
                                  ##"<https://a.example/f>; rel=duplicate; anchor="#top""##,
                                  #"<https://b.example/f>; rel=duplicate; anchor="/other""#,
                                  #"<https://c.example/f>; rel=duplicate; anchor="f""#,
                                  #"<https://d.example/f.meta4>; rel=describedby; type="application/metalink4+xml"; anchor="g""#)
        #expect(Self.hosts(links) == ["a.example", "c.example"])
        #expect(links.dropped.map(\.reason) == [.otherContext, .otherContext])
        #expect(links.metalink == nil)
    }

    @Test("malformed or unusable mirror links are reported; other relations are not")
    func skippedReported() throws {
        let links = try Self.pick("https://origin.example/f",
                                  #"<https://a.example/f>; rel=duplicate; title="unterminated"#,
                                  "<https://b.example/f>; rel=duplicate, <https://bad host/f>; rel=duplicate",
                                  "junk; rel=next, <ftp://c.example/f>; rel=alternate, <https://d.example/f> ; rel=next x",
                                  "<ftp://e.example/f.meta4>; rel=describedby; type=application/metalink4+xml")
        #expect(Self.hosts(links) == ["b.example"])
        #expect(links.dropped.map(\.reason) == [.malformed, .invalidURL, .unsupportedScheme])
        #expect(links.dropped.map(\.isMirror) == [true, true, false])
        #expect(links.dropped.last?.description == "Metalink description ftp://e.example/f.meta4 ignored: not an http or https URL")
    }

    @Test("the Metalink description: the first usable describedby of its media type (case and parameters aside)")
    func metalinkSelection() throws {
        let links = try Self.pick("https://origin.example/f",
                                  "<https://a.example/f.torrent>; rel=describedby; type=application/x-bittorrent",
                                  "<https://b.example/f.meta4>; rel=describedby",
                                  #"<http://c.example/f.meta4>; rel=describedby; type="application/metalink4+xml""#,
                                  #"<https://u:p@d.example/f.meta4>; rel=describedby; type="application/metalink4+xml""#,
                                  #"<f.meta4>; rel="DescribedBy"; type="Application/Metalink4+XML ; charset=utf-8""#,
                                  #"<https://e.example/f.meta4>; rel=describedby; type="application/metalink4+xml""#,
                                  #"<https://f.example/f.meta4>; rel=duplicate; type="application/metalink4+xml""#)
        #expect(links.metalink?.stringWithoutUserinfo == "https://origin.example/f.meta4")
        #expect(links.dropped.map(\.reason) == [.downgrade, .credentials])
        #expect(links.dropped.allSatisfy { !$0.isMirror })
        #expect(Self.hosts(links) == ["f.example"])
    }

    @Test("no Link fields: no mirror, no description, nothing dropped")
    func nothing() throws {
        let links = DuplicateLinks(fieldValues: [], responseURL: try HTTPURL.parse("https://origin.example/f"))
        #expect(links.mirrors.isEmpty && links.metalink == nil && links.dropped.isEmpty && !links.isCutOff)
    }
}
