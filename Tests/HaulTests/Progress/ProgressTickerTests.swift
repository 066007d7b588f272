import HaulTestSupport
import Testing
@testable import Haul

/// The one thread that wakes every running download's progress reporter (``ProgressTicker``).
@Suite("Progress ticker shared by all downloads", .timeLimit(.minutes(1)))
struct ProgressTickerTests {
    /// The next progress event's byte count on `events` (other events skipped).
    private func nextProgress(_ events: EventQueue, _ subscriber: Int) async throws -> Int64? {
        while let event = try await events.next(subscriber: subscriber, onCancel: {}) {
            if case .progress(let progress) = event { return progress.completedBytes }
        }
        return nil
    }

    @Test("a started reporter is woken at its interval and reports the bytes added, without finish")
    func wakesAtTheInterval() async throws {
        let ticker = ProgressTicker()
        let events = EventQueue()
        let subscriber = events.subscribe()
        let reporter = ProgressReporter(events: events, interval: .milliseconds(10), ticker: ticker)
        reporter.start(total: 1000, alreadyComplete: 0)
        reporter.add(100)
        var seen = try await nextProgress(events, subscriber)
        while seen == 0 { seen = try await nextProgress(events, subscriber) }   // a tick before the add
        #expect(seen == 100)
        reporter.add(50)
        var next = try await nextProgress(events, subscriber)
        while next == 100 { next = try await nextProgress(events, subscriber) }   // the once-a-second resend
        #expect(next == 150)
        #expect(ticker.isRunning)
        reporter.finish()
        #expect(await eventually { !ticker.isRunning })   // nobody left: the loop ended
    }

    @Test("two reporters with their own intervals are both woken by one task")
    func severalReporters() async throws {
        let ticker = ProgressTicker()
        let first = EventQueue(), second = EventQueue()
        let a = first.subscribe(), b = second.subscribe()
        let fast = ProgressReporter(events: first, interval: .milliseconds(10), ticker: ticker)
        let slow = ProgressReporter(events: second, interval: .milliseconds(200), ticker: ticker)
        fast.start(total: nil, alreadyComplete: 7)
        slow.start(total: nil, alreadyComplete: 3)
        #expect(try await nextProgress(first, a) == 7)
        #expect(try await nextProgress(second, b) == 3)
        fast.finish()
        slow.finish()
        #expect(await eventually { !ticker.isRunning })
    }

    @Test("after the task ended, the next reporter starts another")
    func restartsAfterIdle() async throws {
        let ticker = ProgressTicker()
        let events = EventQueue()
        let subscriber = events.subscribe()
        ProgressReporter(events: EventQueue(), interval: .milliseconds(10), ticker: ticker).finish()
        #expect(!ticker.isRunning)   // finish without start registers nothing
        let reporter = ProgressReporter(events: events, interval: .milliseconds(10), ticker: ticker)
        reporter.start(total: 10, alreadyComplete: 4)
        #expect(try await nextProgress(events, subscriber) == 4)
        reporter.finish()
        #expect(await eventually { !ticker.isRunning })
        let again = ProgressReporter(events: events, interval: .milliseconds(10), ticker: ticker)
        again.start(total: 10, alreadyComplete: 9)
        #expect(ticker.isRunning)
        // Woken by the new task. The first reporter's last snapshot (4) may still be queued
        // ahead of it when this reads faster than the new one reports.
        var seen = try await nextProgress(events, subscriber)
        if seen == 4 { seen = try await nextProgress(events, subscriber) }
        #expect(seen == 9)
        again.finish()
    }

    @Test("a reporter released without finish is dropped, and the task ends")
    func releasedReporterIsDropped() async throws {
        let ticker = ProgressTicker()
        do {
            let reporter = ProgressReporter(events: EventQueue(), interval: .milliseconds(10), ticker: ticker)
            reporter.start(total: nil, alreadyComplete: 0)
            #expect(ticker.isRunning)
        }
        #expect(await eventually { !ticker.isRunning })
    }
}
