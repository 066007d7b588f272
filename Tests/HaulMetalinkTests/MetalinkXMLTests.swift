import HaulMetalink
import Testing

@Suite("Metalink's XML reader refuses what makes XML dangerous")
struct MetalinkXMLTests {
    @Test("an external entity in a DOCTYPE (XXE) is refused before anything is read")
    func externalEntity() {
        let bytes = Array("""
        <?xml version="1.0"?>
        <!DOCTYPE metalink [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>
        <metalink xmlns="urn:ietf:params:xml:ns:metalink"><file name="a"><description>&xxe;</description>
        <url>http://example.com/a</url></file></metalink>
        """.utf8)
        let error = Documents.error(bytes)
        #expect(error?.code == .refused)
        #expect(error?.offset == 22)
        #expect(error?.description.contains("DOCTYPE") == true)
    }

    @Test("a DOCTYPE SYSTEM alone is refused")
    func doctypeSystem() {
        let bytes = Array("<!DOCTYPE metalink SYSTEM \"file:///etc/passwd\"><metalink xmlns=\"urn:ietf:params:xml:ns:metalink\"/>".utf8)
        #expect(Documents.error(bytes)?.code == .refused)
    }

    @Test("billion laughs is refused at once, in bounded time")
    func billionLaughs() {
        var declarations = "<!ENTITY lol \"lol\">"
        for level in 1...9 {
            let previous = level == 1 ? "lol" : "lol\(level - 1)"
            declarations += "<!ENTITY lol\(level) \"" + String(repeating: "&\(previous);", count: 10) + "\">"
        }
        let bytes = Array("<?xml version=\"1.0\"?><!DOCTYPE lolz [\(declarations)]><metalink xmlns=\"urn:ietf:params:xml:ns:metalink\">&lol9;</metalink>".utf8)
        let started = ContinuousClock.now
        #expect(Documents.error(bytes)?.code == .refused)
        #expect(ContinuousClock.now - started < .seconds(1))
    }

    @Test("an entity declaration inside the root is refused too")
    func entityDeclarationInside() {
        let bytes = Documents.document("<!ENTITY x \"y\"><file name=\"a\"><url>http://e/a</url></file>")
        #expect(Documents.error(bytes)?.code == .refused)
    }

    @Test("an undefined entity is refused, in text and in attributes", arguments: [
        Documents.oneFile("<description>&nbsp;</description>"),
        Documents.oneFile(name: "a&ext;b"),
        Documents.oneFile(url: "http://example.com/&passwd;"),
    ])
    func undefinedEntity(_ bytes: [UInt8]) {
        let error = Documents.error(bytes)
        #expect(error?.code == .refused)
        #expect(error?.message.contains("not defined") == true)
    }

    @Test("the five predefined entities and character references are replaced")
    func references() throws {
        let bytes = Documents.oneFile(name: "&#97;&#x62;c.iso", "<description>&lt;&gt;&amp;&apos;&quot;&#x1F600;</description>",
                                      url: "&#104;ttp://example.com/x?a=1&amp;b=2")
        let file = try #require(try Metalink.parse(bytes).files.first)
        #expect(file.description == "<>&'\"\u{1F600}")
        #expect(file.urls.map(\.url) == ["http://example.com/x?a=1&b=2"])
        #expect(file.name == "abc.iso")
    }

    @Test("character references to NUL, controls, surrogates and beyond U+10FFFF are refused", arguments: [
        "&#0;", "&#x0;", "&#1;", "&#xD800;", "&#xDFFF;", "&#xFFFE;", "&#x110000;", "&#1114112;", "&#99999999999999999999;", "&#;", "&#x;", "&#12a;", "&#32", "&#X41;",
    ])
    func badCharacterReferences(_ reference: String) {
        #expect(Documents.error(Documents.oneFile("<description>\(reference)</description>"))?.code == .malformed)
    }

    @Test("comments, processing instructions, CDATA and single quotes are read")
    func otherConstructs() throws {
        let bytes = Array("""
        \u{FEFF}<?xml version='1.0' encoding='UTF-8'?><!-- a comment --><?style x?>
        <metalink xmlns='urn:ietf:params:xml:ns:metalink'><!-- <file name="hidden"> -->
        <file name='a.iso'><?pi inside?><url priority='2'><![CDATA[http://example.com/a?x=<1>&y]]></url></file>
        </metalink><!-- after -->
        """.utf8)
        let file = try #require(try Metalink.parse(bytes).files.first)
        #expect(file.name == "a.iso")
        #expect(file.urls == [Metalink.Source(url: "http://example.com/a?x=<1>&y", priority: 2)])
    }

    @Test("a prefixed Metalink namespace is read like the default one")
    func prefixedNamespace() throws {
        let bytes = Array("""
        <ml:metalink xmlns:ml="urn:ietf:params:xml:ns:metalink" xmlns="urn:example:other">
        <ml:file name="a.iso"><ml:url>http://example.com/a</ml:url><url>http://evil.example/a</url></ml:file>
        <file name="b.iso"><ml:url>http://example.com/b</ml:url></file>
        </ml:metalink>
        """.utf8)
        let document = try Metalink.parse(bytes)
        #expect(document.files.map(\.name) == ["a.iso"])
        #expect(document.files.first?.urls.map(\.url) == ["http://example.com/a"])
    }

    @Test("elements of other namespaces are skipped with everything inside them")
    func foreignElements() throws {
        let bytes = Documents.document("""
        <x:wrap xmlns:x="urn:example:x"><file name="inside.iso"><url>http://e/inside</url></file></x:wrap>
        <file name="a.iso"><x:url xmlns:x="urn:example:x">http://evil.example/a</x:url><url>http://example.com/a</url>
        <size><x:n xmlns:x="urn:example:x">9</x:n>5</size><description>one <b/>two <x:c xmlns:x="urn:x">x</x:c>three</description></file>
        """)
        let document = try Metalink.parse(bytes)
        #expect(document.files.map(\.name) == ["a.iso"])
        #expect(document.files.first?.urls.map(\.url) == ["http://example.com/a"])
        #expect(document.files.first?.size == 5)
        #expect(document.files.first?.description == "one two three")
    }

    @Test("a root that is not Metalink 4's is refused", arguments: [
        "<metalink><file name=\"a\"><url>http://e/a</url></file></metalink>",
        "<metalink xmlns=\"http://www.metalinker.org/\" version=\"3.0\"><files/></metalink>",
        "<m:metalink xmlns:m=\"urn:ietf:params:xml:ns:metalink2\"/>",
        "<feed xmlns=\"urn:ietf:params:xml:ns:metalink\"/>",
    ])
    func wrongRoot(_ text: String) {
        #expect(Documents.error(Array(text.utf8))?.code == .notMetalink)
    }

    @Test("every truncation of a valid document is refused as malformed")
    func truncated() {
        let bytes = Documents.oneFile("<size>10</size><hash type=\"sha-256\">\(Documents.hex(64))</hash>")
        #expect(Documents.error(bytes) == nil)
        let end = bytes.lastIndex(of: UInt8(ascii: ">"))!
        for length in 0..<end {
            #expect(Documents.error(Array(bytes[..<length]))?.code == .malformed, "a document cut at \(length) bytes")
        }
    }

    @Test("nesting deeper than the limit is refused, quickly even when very deep")
    func deepNesting() {
        let limit = Metalink.Limits.depth
        let within = "<file name=\"a\"><url>http://e/a</url></file>" + String(repeating: "<x>", count: limit - 2) + String(repeating: "</x>", count: limit - 2)
        #expect(Documents.error(Documents.document(within)) == nil)
        let beyond = String(repeating: "<x>", count: limit) + String(repeating: "</x>", count: limit)
        #expect(Documents.error(Documents.document(beyond))?.code == .limitExceeded)
        let started = ContinuousClock.now
        let huge = String(repeating: "<x>", count: 1_000_000)
        #expect(Documents.error(Documents.document(huge))?.code == .limitExceeded)
        #expect(ContinuousClock.now - started < .seconds(5))
    }

    @Test("invalid UTF-8 and characters XML does not allow are refused at their byte", arguments: [
        [0xFF], [0xC0, 0xAF], [0xE0, 0x80, 0xAF], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xE2, 0x82], [0x00], [0x1B], [0xEF, 0xBF, 0xBE],
    ] as [[UInt8]])
    func invalidUTF8(_ bad: [UInt8]) {
        let prefix = Array("<metalink xmlns=\"urn:ietf:params:xml:ns:metalink\"><file name=\"a".utf8)
        let bytes = prefix + bad + Array("\"><url>http://e/a</url></file></metalink>".utf8)
        let error = Documents.error(bytes)
        #expect(error?.code == .malformed)
        #expect(error?.offset == prefix.count)
    }

    @Test("malformed markup is refused with the offset of the problem", arguments: [
        ("<metalink xmlns=\"urn:ietf:params:xml:ns:metalink\"><file></metalink>", 56),
        ("<metalink xmlns=\"urn:ietf:params:xml:ns:metalink\"><a b=\"1\" b=\"2\"/></metalink>", 59),
        ("<metalink xmlns=\"urn:ietf:params:xml:ns:metalink\"><a b=1/></metalink>", 55),
        ("<metalink xmlns=\"urn:ietf:params:xml:ns:metalink\"><p:a/></metalink>", 50),
        ("<metalink xmlns=\"urn:ietf:params:xml:ns:metalink\"/><metalink/>", 51),
        ("<metalink xmlns=\"urn:ietf:params:xml:ns:metalink\"/>text", 51),
        ("<metalink xmlns=\"urn:ietf:params:xml:ns:metalink\"><a b=\"<\"/></metalink>", 56),
        ("<metalink xmlns=\"urn:ietf:params:xml:ns:metalink\">a & b</metalink>", 52),
        ("<metalink xmlns=\"urn:ietf:params:xml:ns:metalink\"><!-- never closed </metalink>", 50),
    ])
    func malformed(_ text: String, offset: Int) {
        let error = Documents.error(Array(text.utf8))
        #expect(error?.code == .malformed)
        #expect(error?.offset == offset, "\(String(describing: error))")
    }

    @Test("too many attributes, a long name, long text and a large document are refused")
    func limits() {
        let attributes = (0...Metalink.Limits.attributesPerElement).map { " a\($0)=\"\"" }.joined()
        #expect(Documents.error(Documents.document("<x\(attributes)/>"))?.code == .limitExceeded)
        let name = String(repeating: "n", count: Metalink.Limits.nameBytes + 1)
        #expect(Documents.error(Documents.document("<\(name)/>"))?.code == .limitExceeded)
        let text = String(repeating: "t", count: Metalink.Limits.textBytesPerElement + 1)
        #expect(Documents.error(Documents.oneFile("<description>\(text)</description>"))?.code == .limitExceeded)
        let split = String(repeating: "t<!---->", count: Metalink.Limits.textBytesPerElement / 2 + 1)
        #expect(Documents.error(Documents.oneFile("<description>\(split)\(split)</description>"))?.code == .limitExceeded)
        let large = [UInt8](repeating: 0x20, count: Metalink.Limits.documentBytes + 1)
        #expect(Documents.error(large)?.code == .tooLarge)
    }
}
