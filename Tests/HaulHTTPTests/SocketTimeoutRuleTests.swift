import HaulTestSupport
import Testing
@testable import HaulHTTP
import HaulCore

/// A connection keeps its socket timeout when the new one is the same or a little shorter (what
/// is left of a head's deadline, request after request), and sets it otherwise.
@Suite
struct SocketTimeoutRuleTests {
    @Test func aTimeoutALittleLongerStandsForTheWantedOne() {
        #expect(Connection.timeout(.seconds(30), standsFor: .seconds(30)))
        #expect(Connection.timeout(.seconds(30), standsFor: .milliseconds(29_999)))
        #expect(Connection.timeout(.seconds(30), standsFor: .milliseconds(29_600)))
    }

    @Test func noneAShorterOneOrAMuchLongerOneIsSetAnew() {
        #expect(!Connection.timeout(nil, standsFor: .seconds(30)))
        #expect(!Connection.timeout(.milliseconds(29_999), standsFor: .seconds(30)), "never shorter than asked")
        #expect(!Connection.timeout(.seconds(30), standsFor: .milliseconds(29_000)), "more than 1/64 longer")
        #expect(!Connection.timeout(.seconds(30), standsFor: .seconds(1)), "a stall timeout after a head's")
        #expect(!Connection.timeout(.seconds(1), standsFor: .zero))
        #expect(!Connection.timeout(.seconds(1), standsFor: .milliseconds(-500)))
    }

    @Test func theLimitIsExactlyOneSixtyFourthOfTheWantedTimeout() {
        #expect(Connection.timeout(.microseconds(65_000), standsFor: .microseconds(64_000)))
        #expect(!Connection.timeout(.microseconds(65_001), standsFor: .microseconds(64_000)))
    }

    @Test func aNegativeDurationIsNoMicrosecondsAndNoMilliseconds() {
        #expect(Duration.milliseconds(-500).microseconds == 0)
        #expect(Duration.milliseconds(-500).milliseconds == 0)
        #expect(Duration.seconds(-2).microseconds == 0)
        #expect(Duration.milliseconds(1500).microseconds == 1_500_000)
        #expect(Duration.microseconds(1).milliseconds == 1, "rounded up")
    }
}
