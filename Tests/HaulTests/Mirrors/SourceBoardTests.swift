@testable import Haul
import Testing

/// The sources of a transfer as a pure state, its clock given by the test: which source the
/// next connection gets, and when a source is set aside.
@Suite struct SourceBoardTests {
    let start = ContinuousClock.now

    func at(_ milliseconds: Int) -> ContinuousClock.Instant { start + .milliseconds(milliseconds) }

    @Test func unmeasuredSourcesComeFirstThenTheFastestPerConnection() {
        var board = SourceBoard(count: 3, connectionsPerSource: 2)
        #expect(board.pick() == 0)
        board.connect(0)
        #expect(board.pick() == 1, "a source with no connection before one with one")
        board.connect(1)
        board.connect(2)
        _ = board.measure(now: at(0))
        board.wrote(4_000_000, from: 0, at: at(100))
        board.wrote(1_000_000, from: 1, at: at(100))
        board.wrote(2_000_000, from: 2, at: at(100))
        _ = board.measure(now: at(1000))
        #expect(board.pick() == 0, "the most bytes per connection")
        board.connect(0)
        #expect(board.pick() == 2, "a full source takes no more")
    }

    @Test func aSourceUnderAQuarterOfTheMedianForFiveSecondsIsSetAside() {
        var board = SourceBoard(count: 3, connectionsPerSource: 1)
        for index in 0..<3 { board.connect(index) }
        _ = board.measure(now: at(0))
        var setAside: [Int] = []
        var second = 1
        while setAside.isEmpty, second <= 10 {
            board.wrote(1_000_000, from: 0, at: at(second * 1000 - 1))
            board.wrote(1_000_000, from: 1, at: at(second * 1000 - 1))
            board.wrote(240_000, from: 2, at: at(second * 1000 - 1))   // under a quarter
            setAside = board.measure(now: at(second * 1000))
            second += 1
        }
        #expect(setAside == [2])
        #expect(second - 1 == 6, "slow from the first measurement (1 s) until 5 s later")
        #expect(!board.isUsable(2))
        guard case .setAside(let reason, let retryLater) = board.sources[2].standing else { return }
        #expect(reason.contains("far slower") && retryLater)
    }

    @Test func aQuarterOfTheMedianIsNotSlow() {
        var board = SourceBoard(count: 3, connectionsPerSource: 1)
        for index in 0..<3 { board.connect(index) }
        _ = board.measure(now: at(0))
        for second in 1...10 {
            for (index, bytes) in [(0, 1_000_000), (1, 1_000_000), (2, 250_000)] {
                board.wrote(Int64(bytes), from: index, at: at(second * 1000 - 1))
            }
            #expect(board.measure(now: at(second * 1000)).isEmpty)
        }
    }

    @Test func aSlowSourceThatCatchesUpStartsItsPeriodAgain() {
        var board = SourceBoard(count: 2, connectionsPerSource: 1)
        board.connect(0)
        board.connect(1)
        _ = board.measure(now: at(0))
        for second in 1...12 {
            board.wrote(1_000_000, from: 0, at: at(second * 1000 - 1))
            board.wrote(second == 4 ? 1_000_000 : 10_000, from: 1, at: at(second * 1000 - 1))
            let setAside = board.measure(now: at(second * 1000))
            #expect(setAside == (second == 10 ? [1] : []), "second \(second): slow again from 5 s, set aside 5 s later")
        }
    }

    @Test func failuresSetASourceAsideAfterTheRetriesOrAtOnceWhenNoRetryHelps() {
        var board = SourceBoard(count: 2, connectionsPerSource: 1)
        let refused = DownloadError(.connectionRefused, "refused")
        let answer1 = board.failed(0, error: refused, maximumRetries: 2)
        #expect(!answer1)
        let answer2 = board.failed(0, error: refused, maximumRetries: 2)
        #expect(!answer2)
        let answer3 = board.failed(0, error: refused, maximumRetries: 2)
        #expect(answer3)
        let answer4 = board.failed(1, error: DownloadError(.httpStatus, "the server answered 404", httpStatus: 404), maximumRetries: 2)
        #expect(answer4)
        #expect(board.pick() == nil)
        let answer5 = board.reviveRetryable()
        #expect(answer5, "the refusing source may serve again")
        #expect(board.pick() == 0)
        #expect(!board.isUsable(1), "a 404 never comes back")
    }

    @Test func writtenBytesClearAFailureCount() {
        var board = SourceBoard(count: 2, connectionsPerSource: 1)
        let reset = DownloadError(.connectionReset, "reset")
        for _ in 0..<10 {
            let answer6 = board.failed(0, error: reset, maximumRetries: 1)
            #expect(!answer6)
            board.wrote(1, from: 0, at: at(0))
        }
    }

    @Test func aLoneSourceIsNeverSetAside() {
        var board = SourceBoard(count: 1, connectionsPerSource: 4)
        let answer7 = board.failed(0, error: DownloadError(.httpStatus, "404", httpStatus: 404), maximumRetries: 0)
        #expect(!answer7)
        #expect(board.isUsable(0))
    }

    @Test func aSourceTwiceAsFastTakesOverTheOthersTail() {
        var board = SourceBoard(count: 2, connectionsPerSource: 1)
        board.wrote(2_000_000, from: 0, at: at(0))
        board.wrote(900_000, from: 1, at: at(0))
        #expect(board.outpaces(0, 1, now: at(1000)))
        #expect(!board.outpaces(1, 0, now: at(1000)))
        #expect(!board.outpaces(0, 0, now: at(1000)))
    }
}
