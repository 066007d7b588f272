import HaulTestSupport
import Testing
@testable import HaulDaemon
import HaulJSON

/// The JSON parser and writer: strict, bounded, and exact about numbers and strings.
@Suite struct JSONTests {
    static func parse(_ text: String) throws(JSONParseError) -> JSONValue {
        try JSONParser().parse(Array(text.utf8))
    }

    @Test func documentsParse() throws {
        #expect(try Self.parse(#" {"a":[1,-2.5e+3,true,false,null,"x"],"b":{}} "#) == [
            "a": [.number(JSONNumber(text: "1")), .number(JSONNumber(text: "-2.5e+3")), true, false, nil, "x"],
            "b": .object(JSONObject()),
        ])
        #expect(try Self.parse("[]") == [])
        #expect(try Self.parse("0") == .number(JSONNumber(text: "0")))
        #expect(try Self.parse(#""\u00e9\ud83d\ude00\n\/""#) == .string("é😀\n/"))
        #expect(try Self.parse("12345678901234567890").integer == nil, "too big for 64 bits, kept as text")
        #expect(try Self.parse(#"{"id":7e1}"#).object?["id"]?.integer == nil, "an exponent is not an integer here")
        #expect(try Self.parse(#"{"id":1,"id":2}"#).object?["id"]?.integer == 1, "the first of a repeated name")
    }

    @Test(arguments: [
        "", " ", "[", "]", "{", "[1,]", "{\"a\":1,}", "{'a':1}", "[01]", "[1.]", "[.5]", "[-]", "[1e]", "NaN", "[Infinity]",
        "tru", "nul", "\"abc", "\"a\u{01}b\"", "\"\\x\"", "\"\\u12\"", "\"\\ud800\"", "\"\\udc00\"", "\"\\ud800\\u0041\"",
        "[1] [2]", "{\"a\" 1}", "{1:2}", "// c\n1", "[1,,2]", "+1",
    ])
    func malformedTextIsRefused(text: String) {
        #expect(throws: JSONParseError.self) { try Self.parse(text) }
    }

    @Test func invalidUTF8IsRefused() {
        for bytes: [UInt8] in [[0x22, 0xFF, 0x22], [0x22, 0xC3, 0x22], [0x22, 0xED, 0xA0, 0x80, 0x22], [0x22, 0xC0, 0xAF, 0x22]] {
            #expect(throws: JSONParseError.self) { try JSONParser().parse(bytes) }
        }
    }

    @Test func nestingIsBounded() throws {
        let deep = String(repeating: "[", count: 64) + String(repeating: "]", count: 64)
        #expect(throws: Never.self) { try Self.parse(deep) }
        let tooDeep = String(repeating: "[", count: 65) + String(repeating: "]", count: 65)
        #expect(throws: JSONParseError.self) { try Self.parse(tooDeep) }
        let hostile = String(repeating: "{\"a\":", count: 100_000)
        #expect(throws: JSONParseError.self) { try Self.parse(hostile) }
    }

    @Test func theWriterEscapesWhatJSONRequiresAndNothingElse() throws {
        let value: JSONValue = ["s": .string("a\"b\\c\n\r\t\u{08}\u{0C}\u{01}é😀/"), "n": .number(JSONNumber(text: "-0.5e3")),
                                "l": [true, nil, 7]]
        let text = String(decoding: JSONWriter.encode(value), as: UTF8.self)
        #expect(text == #"{"s":"a\"b\\c\n\r\t\b\f\u0001é😀/","n":-0.5e3,"l":[true,null,7]}"#)
        #expect(try Self.parse(text) == value)
    }

    @Test func randomBytesNeverTrap() {
        var generator = SplitMix64(seed: 2027)
        let alphabet = Array("{}[]\",:0123456789-+.eEtrufalsn\\u \n\t".utf8) + [0x00, 0x80, 0xFF, 0xC3, 0xA9]
        for _ in 0..<5000 {
            let count = Int.random(in: 0..<40, using: &generator)
            let bytes = (0..<count).map { _ in alphabet[Int.random(in: 0..<alphabet.count, using: &generator)] }
            if let value = try? JSONParser().parse(bytes) {
                #expect((try? JSONParser().parse(JSONWriter.encode(value))) == value)
            }
        }
    }
}
