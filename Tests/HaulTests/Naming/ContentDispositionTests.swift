import HaulTestSupport
import Testing
@testable import Haul

@Suite struct ContentDispositionTests {
    /// The examples of RFC 6266 section 5.
    @Test(arguments: [
        ("Attachment; filename=example.html", "example.html"),
        ("INLINE; FILENAME= \"an example.html\"", "an example.html"),
        ("attachment; filename*= UTF-8''%e2%82%ac%20rates", "€ rates"),
        ("attachment; filename=\"EURO rates\"; filename*=utf-8''%e2%82%ac%20rates", "€ rates"),
    ])
    func rfc6266Examples(header: String, expected: String) {
        #expect(ContentDisposition.filename(from: header) == expected)
    }

    @Test(arguments: [
        ("attachment; filename*=UTF-8''%e2%82%ac%20rates.txt", "€ rates.txt"),
        ("attachment; filename*=iso-8859-1'en'%A3%20rates", "£ rates"),
        ("attachment; filename*=ISO-8859-1''%a3", "£"),
        ("attachment; filename*=Utf-8'de-DE'na%C3%AFve.txt", "naïve.txt"),
        // Preferred over filename whichever comes first.
        ("attachment; filename*=UTF-8''a.txt; filename=\"b.txt\"", "a.txt"),
        ("attachment; filename=b.txt; filename*=UTF-8''a.txt", "a.txt"),
        // Decoded, not sanitised: the sanitiser removes the traversal.
        ("attachment; filename*=UTF-8''%2e%2e%2fsecret.txt", "../secret.txt"),
        ("attachment; filename*=UTF-8''%00evil.txt", "\u{0}evil.txt"),
    ])
    func extendedValue(header: String, expected: String) {
        #expect(ContentDisposition.filename(from: header) == expected)
    }

    /// A `filename*` that cannot be decoded is ignored; `filename` is used when present.
    @Test(arguments: [
        ("attachment; filename*=UTF-16''abc; filename=x.txt", "x.txt"),
        ("attachment; filename*=UTF-8''%ff%fe.txt; filename=x.txt", "x.txt"),
        ("attachment; filename*=UTF-8''%c3; filename=x.txt", "x.txt"),
        ("attachment; filename*=UTF-8''bad%2; filename=x.txt", "x.txt"),
        ("attachment; filename*=UTF-8''bad%zz; filename=x.txt", "x.txt"),
        ("attachment; filename*=\"UTF-8''quoted.txt\"; filename=x.txt", "x.txt"),
        ("attachment; filename*=nocharset; filename=x.txt", "x.txt"),
        ("attachment; filename*=UTF-8'only-one-quote; filename=x.txt", "x.txt"),
        ("attachment; filename*=UTF-8''; filename=x.txt", "x.txt"),
    ])
    func undecodableExtendedValueFallsBackToFilename(header: String, expected: String) {
        #expect(ContentDisposition.filename(from: header) == expected)
    }

    @Test(arguments: [
        "attachment; filename*=UTF-8''%ff.txt",
        "attachment; filename*=KOI8-R''%c1",
        "attachment; filename*=UTF-8''%",
    ])
    func undecodableExtendedValueAloneGivesNil(header: String) {
        #expect(ContentDisposition.filename(from: header) == nil)
    }

    @Test(arguments: [
        (#"attachment; filename="a\"b""#, #"a"b"#),
        (#"attachment; filename="..\\..\\x""#, #"..\..\x"#),
        // A backslash escapes the next character, so these backslashes disappear.
        (#"attachment; filename="..\..\x""#, "....x"),
        (#"attachment; filename="a\\b.txt""#, #"a\b.txt"#),
        (#"attachment; filename="semi;colon \"q\".txt""#, #"semi;colon "q".txt"#),
        ("attachment; filename=\"tab\there\"", "tab\there"),
        ("inline; filename=\"caf\u{E9}.txt\"", "café.txt"),
        ("attachment; filename=\"/abs/x\"", "/abs/x"),
    ])
    func quotedStrings(header: String, expected: String) {
        #expect(ContentDisposition.filename(from: header) == expected)
    }

    @Test(arguments: [
        ("attachment;filename=a.txt", "a.txt"),
        ("attachment; filename=a.txt;", "a.txt"),
        ("attachment;; filename=a.txt", "a.txt"),
        ("  attachment ; filename = a.txt  ", "a.txt"),
        ("attachment; size=12; creation-date=\"x\"; filename=a.txt", "a.txt"),
        ("form-data; name=field; filename=a.txt", "a.txt"),
        ("attachment;\tfilename=a.txt", "a.txt"),
    ])
    func parameterSyntax(header: String, expected: String) {
        #expect(ContentDisposition.filename(from: header) == expected)
    }

    @Test(arguments: [
        "",
        "   ",
        "attachment",
        "inline; size=10",
        "; filename=a.txt",
        "\"attachment\"; filename=a.txt",
        "attachment filename=a.txt",
        "attachment; filename",
        "attachment; filename=",
        "attachment; filename=\"\"",
        "attachment; =a.txt",
        "attachment; filename=a b.txt",
        "attachment; filename=caf\u{E9}.txt",
        "attachment; filename=\"unterminated",
        "attachment; filename=\"ends in escape\\",
        "attachment; filename=\"a\"b",
        "attachment; filename=\"nul\u{0}inside\"",
        "attachment; filename=\"esc\u{1B}inside\"",
        "attachment; filename=a.txt; filename=b.txt",
        "attachment; FILENAME=a.txt; filename=b.txt",
        "attachment; filename*=UTF-8''a; filename*=UTF-8''b",
        "attachment; filename=a.txt, inline",
    ])
    func invalidOrMissingGivesNil(header: String) {
        #expect(ContentDisposition.filename(from: header) == nil)
    }

    /// Arbitrary input never crashes and never yields an empty name.
    @Test func arbitraryInputNeverCrashes() {
        let pieces = ["a", ";", "=", "\"", "\\", "'", "%", "2f", "%e2%82", "*", " ", "\t", "é", "\u{0}", "/",
                      "filename", "filename*", "UTF-8''", "iso-8859-1'en'", "attachment"]
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next(_ bound: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(bound))
        }
        var named = 0
        for _ in 0..<5_000 {
            var text = "attachment; "
            for _ in 0..<next(12) + 1 { text += pieces[next(pieces.count)] }
            if let name = ContentDisposition.filename(from: text) {
                #expect(!name.isEmpty)
                named += 1
            }
        }
        // The generator does reach valid values, so the loop exercises both outcomes.
        #expect(named > 0)
    }
}
