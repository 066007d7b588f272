import HaulCore
import Testing

/// Base64, hexadecimal digits and percent-decoding: the one home of each, against published
/// vectors and round trips.
@Suite struct TextCodecTests {
    static let rfc4648 = [("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"), ("foob", "Zm9vYg=="),
                          ("fooba", "Zm9vYmE="), ("foobar", "Zm9vYmFy")]

    @Test(arguments: rfc4648)
    func base64MatchesRFC4648(_ input: String, output: String) {
        #expect(Base64.encode(Array(input.utf8)) == output)
        #expect(Base64.decode(output.utf8, padding: .required) == Array(input.utf8))
        #expect(Base64.decode(output.utf8.filter { $0 != UInt8(ascii: "=") }) == Array(input.utf8), "padding may be left out")
    }

    @Test func base64RefusesWhatIsNotCanonical() {
        #expect(Base64.decode("Zg".utf8, padding: .required) == nil, "padding required")
        #expect(Base64.decode("Zh==".utf8) == nil, "unused bits set")
        #expect(Base64.decode("Zg=".utf8) == nil, "padding of the wrong length")
        #expect(Base64.decode("Z===".utf8) == nil)
        #expect(Base64.decode("Zg==Zg==".utf8) == nil, "padding in the middle")
        #expect(Base64.decode("Zm9v YmFy".utf8) == nil)
        #expect(Base64.decode("Zm9-".utf8) == nil, "base64url is another alphabet")
        #expect(Base64.decode("Z".utf8) == nil)
    }

    @Test func base64RoundTripsEveryLength() {
        var generator = SystemRandomNumberGenerator()
        for count in 0..<70 {
            let bytes = (0..<count).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
            let text = Base64.encode(bytes)
            #expect(text.utf8.count == (count + 2) / 3 * 4)
            #expect(Base64.decode(text.utf8, padding: .required) == bytes)
        }
    }

    @Test func hexEncodesLowercaseAndDecodesEitherCase() {
        #expect(Hex.encode([0x00, 0x0f, 0xa0, 0xff]) == "000fa0ff")
        #expect(Hex.decode("000FA0fF") == [0x00, 0x0f, 0xa0, 0xff])
        #expect(Hex.decode("abc") == nil)
        #expect(Hex.decode("0g") == nil)
        #expect(Hex.value(of: UInt8(ascii: "F")) == 15)
        #expect(Hex.value(of: UInt8(ascii: "G")) == nil)
    }

    @Test func strictPercentDecodingRefusesABrokenEscape() {
        #expect(PercentDecoding.strict(Array("a%20b%2Fc%C3%A9+".utf8)) == Array("a b/cé+".utf8))
        #expect(PercentDecoding.strict(Array("%41".utf8)) == [0x41])
        for broken in ["%", "%4", "%zz", "a%2", "%%41"] {
            #expect(PercentDecoding.strict(Array(broken.utf8)) == nil, "\(broken)")
        }
    }

    @Test func lenientPercentDecodingKeepsABrokenEscapeAndSaysWhereEachByteStarts() {
        let decoded = PercentDecoding.lenient(Array("a%41%zz%4".utf8))
        #expect(decoded.bytes == Array("aA%zz%4".utf8))
        #expect(decoded.starts == [0, 1, 4, 5, 6, 7, 8])
        #expect(PercentDecoding.lenient(Array("100%".utf8)).bytes == Array("100%".utf8))
        #expect(PercentDecoding.lenient(Array("x%41"[...].utf8)).bytes == Array("xA".utf8))
    }
}
