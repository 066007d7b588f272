import HaulTestSupport
import Testing
@testable import HaulHTTP
import HaulCore

/// ``LinkHeader``: the syntax of RFC 8288 §3, its examples, and what a malformed or oversized
/// field does.
@Suite struct LinkHeaderTests {
    static let base = "https://example.com/TheBook/chapter3"

    /// Parses `fields` against ``base``.
    static func parse(_ fields: String...) throws -> LinkHeader {
        LinkHeader(fieldValues: fields, base: try HTTPURL.parse(base))
    }

    @Test("RFC 8288 §3.5: a link with a quoted title")
    func titledLink() throws {
        let header = try Self.parse(#"<http://example.com/TheBook/chapter2>; rel="previous"; title="previous chapter""#)
        let link = try #require(header.links.first)
        #expect(header.links.count == 1 && header.skipped.isEmpty && !header.isCutOff)
        #expect(link.target.stringWithoutUserinfo == "http://example.com/TheBook/chapter2")
        #expect(link.relations == ["previous"])
        #expect(link.parameter("title")?.value == "previous chapter")
    }

    @Test("RFC 8288 §3.5: the root as a relative target, an extension relation type and an anchor")
    func rootExtensionAndAnchor() throws {
        let header = try Self.parse(#"</>; rel="http://example.net/foo""#, ##"</terms>; rel="copyright"; anchor="#foo""##)
        #expect(header.links.map(\.target.stringWithoutUserinfo) == ["https://example.com/", "https://example.com/terms"])
        #expect(header.links[0].relations == ["http://example.net/foo"])
        #expect(header.links[1].parameter("anchor")?.value == "#foo")
        #expect(header.links.map(\.position) == [0, 1])
    }

    @Test("RFC 8288 §3.5: two links in one field, with RFC 8187 titles kept as written")
    func twoLinksWithExtendedTitles() throws {
        let header = try Self.parse(
            "</TheBook/chapter2>; rel=\"previous\"; title*=UTF-8'de'letztes%20Kapitel, "
                + "</TheBook/chapter4>; rel=\"next\"; title*=UTF-8'de'n%c3%a4chstes%20Kapitel")
        #expect(header.links.map(\.relations) == [["previous"], ["next"]])
        #expect(header.links.map(\.target.path) == ["/TheBook/chapter2", "/TheBook/chapter4"])
        #expect(header.links[1].parameter("TITLE*")?.value == "UTF-8'de'n%c3%a4chstes%20Kapitel")
    }

    @Test("RFC 8288 §3.5: several relation types in one rel; two links with OWS between")
    func severalRelations() throws {
        let header = try Self.parse(#"<http://example.org/>; rel="start http://example.net/relation/other""#,
                                    #"<https://example.org/>; rel="start",   <https://example.org/index>; rel="index""#)
        #expect(header.links.map(\.relations) == [["start", "http://example.net/relation/other"], ["start"], ["index"]])
        #expect(header.links[0].hasRelation("START") && header.links[0].hasRelation("http://EXAMPLE.net/relation/other"))
        #expect(header.links.map(\.position) == [0, 1, 2])
    }

    @Test("commas inside <> and inside quoted strings do not separate links")
    func commasInsideURIsAndQuotes() throws {
        let header = try Self.parse(#"<https://m.example/a,b>; rel=duplicate; title="one, \"two\", \\three", <https://n.example/>; rel=next"#)
        #expect(header.links.count == 2)
        #expect(header.links[0].target.path == "/a,b")
        #expect(header.links[0].parameter("title")?.value == #"one, "two", \three"#)
        #expect(header.links[1].target.host == "n.example")
    }

    @Test("relative references resolve against the response's URL", arguments: [
        ("../other/file.iso", "https://example.com/other/file.iso"),
        ("chapter4", "https://example.com/TheBook/chapter4"),
        ("//cdn.example.net/x", "https://cdn.example.net/x"),
        ("?page=2", "https://example.com/TheBook/chapter3?page=2"),
        ("", "https://example.com/TheBook/chapter3"),
        ("  /spaced  ", "https://example.com/spaced"),
        ("#section", "https://example.com/TheBook/chapter3"),
    ])
    func relativeReferences(_ reference: String, expected: String) throws {
        let header = try Self.parse("<\(reference)>; rel=duplicate")
        #expect(header.links.map(\.target.stringWithoutUserinfo) == [expected])
    }

    @Test("parameter names and relation types ignore ASCII case; names come out lowercased")
    func caseInsensitive() throws {
        let link = try #require(try Self.parse(#"<https://m.example/f>; REL="Duplicate Next"; Pri=2; PREF"#).links.first)
        #expect(link.relations == ["duplicate", "next"])
        #expect(link.hasRelation("DUPLICATE"))
        #expect(link.parameters.map(\.name) == ["rel", "pri", "pref"])
        #expect(link.parameter("pri")?.value == "2")
        #expect(link.parameter("Pref") == LinkHeader.Parameter(name: "pref", value: nil))
    }

    @Test("only the first occurrence of a parameter counts")
    func repeatedParameters() throws {
        let link = try #require(try Self.parse("<https://m.example/f>; rel=next; pri=1; REL=duplicate; pri=2").links.first)
        #expect(link.relations == ["next"])
        #expect(link.parameter("pri")?.value == "1")
        #expect(link.parameters.count == 2)
    }

    @Test("whitespace around separators and '=', empty list elements and empty parameters are allowed")
    func optionalWhitespace() throws {
        let header = try Self.parse(" ,\t<https://a.example/x>  ;  rel = duplicate ;pri= 3 ;; , ,<https://b.example/y>;")
        #expect(header.links.count == 2 && header.skipped.isEmpty)
        #expect(header.links[0].parameter("pri")?.value == "3")
        #expect(header.links[0].relations == ["duplicate"])
    }

    @Test("an unquoted media type is read as a value")
    func unquotedMediaType() throws {
        let link = try #require(try Self.parse("<f.meta4>; rel=describedby; type=application/metalink4+xml").links.first)
        #expect(link.parameter("type")?.value == "application/metalink4+xml")
    }

    @Test("malformed link-values are set aside and the good ones around them kept")
    func malformedAmongGood() throws {
        let header = try Self.parse(
            #"garbage; rel=duplicate, <https://a.example/1>; rel=one, <https://b.example/2> stray; rel=two, <https://c.example/3>; rel=three"#,
            #"<https://d.example/4>; rel=four; =x, <https://e.example/5>; rel="five""#,
            #"<https://f.example/6>; rel=six; title="never closed, <https://g.example/7>; rel=seven"#,
            #"<https://h.example/8; rel=eight"#,
            #"<https://i.example/9>; rel=nine; title="a"b, <https://j.example/10>; rel=ten"#)
        #expect(header.links.map(\.relations) == [["one"], ["three"], ["five"], ["ten"]])
        #expect(header.skipped.map(\.problem) == Array(repeating: .malformed, count: 6))
        #expect(header.skipped.map(\.position) == [0, 2, 4, 6, 7, 8])
        #expect(header.skipped[0].relations.isEmpty && header.skipped[0].reference.isEmpty)
        #expect(header.skipped[1].reference == "https://b.example/2")
        #expect(header.skipped[3].relations == ["six"])
    }

    @Test("a target that is not http(s) or not a URL is set aside", arguments: [
        ("ftp://ftp.example.com/f", LinkHeader.SkippedLink.Problem.unsupportedScheme),
        ("magnet:?xt=urn:btih:0", .unsupportedScheme),
        ("https://exa mple.com/f", .invalidURL),
        ("https://example.com:99999/f", .invalidURL),
        ("https:///f", .invalidURL),
    ])
    func unresolvable(_ reference: String, problem: LinkHeader.SkippedLink.Problem) throws {
        let header = try Self.parse("<\(reference)>; rel=duplicate, <https://ok.example/f>; rel=duplicate")
        #expect(header.skipped.map(\.problem) == [problem])
        #expect(header.skipped.first?.relations == ["duplicate"])
        #expect(header.links.map(\.target.host) == ["ok.example"])
    }

    @Test("a reference that names a user is marked; the resolved target does not keep it", arguments: [
        ("https://user:secret@m.example/f", true), ("//user@m.example/f", true), ("HTTP://u:@m.example/", true),
        ("https://m.example/a@b", false), ("/a@b", false), ("https://m.example/f?x=@", false),
    ])
    func userinfo(_ reference: String, expected: Bool) throws {
        let link = try #require(try Self.parse("<\(reference)>").links.first)
        #expect(link.referenceHasUserinfo == expected)
        #expect(link.target.user == nil)
    }

    @Test("at most maximumLinkCount link-values are read")
    func linkBound() throws {
        let many = (0..<100).map { "<https://m\($0).example/f>; rel=duplicate" }
        let header = LinkHeader(fieldValues: [many[..<50].joined(separator: ","), many[50...].joined(separator: ",")],
                                base: try HTTPURL.parse(Self.base))
        #expect(header.links.count == LinkHeader.maximumLinkCount && header.isCutOff)
        #expect(header.links.last?.target.host == "m63.example")
        let exact = LinkHeader(fieldValues: Array(many.prefix(LinkHeader.maximumLinkCount)), base: try HTTPURL.parse(Self.base))
        #expect(exact.links.count == LinkHeader.maximumLinkCount && !exact.isCutOff)
    }

    @Test("at most maximumFieldBytes bytes are read; the link-value cut by the bound is dropped whole")
    func byteBound() throws {
        let padding = String(repeating: "p", count: 400)
        let links = (10..<60).map { "<https://m\($0).example/\(padding)>; rel=duplicate; pri=123456" }   // all of one length
        let header = LinkHeader(fieldValues: [links[..<10].joined(separator: ", "), links[10...].joined(separator: ", "), links[0]],
                                base: try HTTPURL.parse(Self.base))
        #expect(header.isCutOff)
        #expect(header.links.count == LinkHeader.maximumFieldBytes / (links[0].utf8.count + 2))
        #expect(header.links.allSatisfy { $0.parameter("pri")?.value == "123456" })
        #expect(header.skipped.isEmpty)
    }

    @Test("a control byte inside a quoted string makes the link malformed; bytes of any kind never trap")
    func controlBytes() throws {
        let header = try Self.parse("<https://a.example/>; title=\"x\u{0}y\", <https://b.example/>; title=\"\u{E9}\"",
                                    "<https://c.example/\u{7F}>; rel=\u{FF}")
        #expect(header.links.map(\.target.host) == ["b.example"])
        #expect(header.links.first?.parameter("title")?.value == "\u{E9}")
        #expect(header.skipped.map(\.problem) == [.malformed, .invalidURL])
    }
}
