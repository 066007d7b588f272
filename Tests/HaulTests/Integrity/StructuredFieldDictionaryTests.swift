import HaulTestSupport
import Testing
@testable import Haul
import HaulCore

@Suite struct StructuredFieldDictionaryTests {
    // Dictionary examples of RFC 8941 section 3.2 (https://www.rfc-editor.org/rfc/rfc8941#section-3.2).
    @Test(arguments: [
        "en=\"Applepie\", da=:w4ZibGV0w6ZydGU=:",
        "a=?0, b, c; foo=bar",
        "rating=1.5, feelings=(joy sadness)",
        "a=(1 2), b=3, c=4;aa=bb, d=(5 6);valid",
        "  a=1 ,\tb=2  ",
        "*x=tok/en:1, y=-42, z=\"say \\\"hi\\\"\"",
    ])
    func acceptsValidDictionaries(text: String) {
        #expect(StructuredFieldDictionary(parsing: text) != nil)
    }

    @Test func decodesByteSequences() throws {
        let dictionary = try #require(StructuredFieldDictionary(parsing: "en=\"Applepie\", da=:w4ZibGV0w6ZydGU=:"))
        #expect(dictionary["da"] == .bytes(Array("Æblet\u{e6}rte".utf8)))
        #expect(dictionary["en"] == .other)
        #expect(dictionary.keys == ["en", "da"])
    }

    @Test(arguments: [
        "a=1,", ",a=1", "a=1,,b=2", "A=1", "1a=2", "a=:not base64!:", "a=\"open", "a=(1 2", "a=1 b=2",
        "a=1234567890123456", "a=1.2345", "a=?2", "a=\"tab\there\"", "a=1;B=2", "a=@",
    ])
    func rejectsInvalidDictionaries(text: String) {
        #expect(StructuredFieldDictionary(parsing: text) == nil)
    }

    @Test(arguments: [
        ("", [UInt8]()), ("Zg==", Array("f".utf8)), ("Zg", Array("f".utf8)), ("Zm8=", Array("fo".utf8)),
        ("Zm9v", Array("foo".utf8)), ("Zm9vYmFy", Array("foobar".utf8)),       // RFC 4648 section 10
    ])
    func base64Vectors(text: String, bytes: [UInt8]) {
        #expect(Base64.decode(text.utf8) == bytes)
    }

    @Test(arguments: ["Z", "Zg=", "Zh==", "Z===", "Zm9v!", "Zm=9", "Zg==="])
    func base64Rejects(text: String) {
        #expect(Base64.decode(text.utf8) == nil)
    }
}
