import HaulTestSupport
import Testing
@testable import Haul

/// A connection keeps its socket timeout when the new one is the same or a little shorter (what
/// is left of a head's deadline, request after request), and sets it otherwise.
@Suite(.exclusive, .serialized)
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
    }
}
