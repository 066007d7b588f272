import Foundation
import HaulTestSupport
import Testing
@testable import Haul
@testable import HaulSigning
import HaulCore
import HaulHTTP

@Suite struct SigningTargetTests {
    @Test func encodesAllButUnreservedAsUppercaseHex() {
        #expect(SigningTarget.encode("AZaz09-._~") == "AZaz09-._~")
        #expect(SigningTarget.encode("a b/c+d=e&é*") == "a%20b%2Fc%2Bd%3De%26%C3%A9%2A")
        #expect(SigningTarget.encode("/a b/c", keepingSlashes: true) == "/a%20b/c")
    }

    @Test func decodesPercentEscapesButNotPlus() {
        #expect(SigningTarget.percentDecoded("a%20b+c%2F%C3%A9") == "a b+c/é")
        #expect(SigningTarget.percentDecoded("100%") == "100%")
        #expect(SigningTarget.percentDecoded("%zz") == "%zz")
    }

    @Test func splitsAnHTTPURL() throws {
        let target = try SigningTarget(url: try #require(URL(string: "https://Host.Example:443/a%20b/c?x=1&flag&y=%2F")))
        #expect(target.host == "host.example")
        #expect(target.port == nil)
        #expect(target.hostHeader == "host.example")
        #expect(target.path == "/a b/c")
        #expect(target.query.map(\.name) == ["x", "flag", "y"])
        #expect(target.query.map(\.value) == ["1", "", "/"])
        let other = try SigningTarget(url: try #require(URL(string: "http://127.0.0.1:9000/b")))
        #expect(other.hostHeader == "127.0.0.1:9000")
    }

    @Test(arguments: [
        (0 as Double, "19700101T000000Z"),
        (1_369_353_600, "20130524T000000Z"),
        (951_825_600.9, "20000229T120000Z"),        // leap day, fraction truncated
        (1_702_781_677, "20231217T025437Z"),
        (4_102_444_799, "20991231T235959Z"),
    ])
    func utcTimestamps(seconds: Double, timestamp: String) {
        let time = SigningTime(Date(timeIntervalSince1970: seconds))
        #expect(time.timestamp == timestamp)
        #expect(time.day == String(timestamp.prefix(8)))
    }
}
