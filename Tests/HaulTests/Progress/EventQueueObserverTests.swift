import Foundation
import HaulTestSupport
import Testing
@testable import Haul
import HaulCore
import HaulHTTP

/// ``EventQueue/observe(_:)``: the callbacks behind ``Downloader/start(_:to:onEvent:completion:)``.
@Suite("Event observers", .timeLimit(.minutes(1)))
struct EventQueueObserverTests {
    private static let done = DownloadResult(response: ResponseHead(status: 200), fileURL: URL(fileURLWithPath: "/tmp/x.bin"),
                                             byteCount: 3, skipped: false)

    /// A compact name for each observation, to compare sequences.
    private static func describe(_ observation: EventQueue.Observation) -> String {
        switch observation {
        case .event(.warning(let text)): return text
        case .event(.progress(let progress)): return "progress \(progress.completedBytes)"
        case .event(.finished): return "finished"
        case .event: return "other event"
        case .ended(.success): return "ended"
        case .ended(.failure(let error)): return "failed \(error.code)"
        }
    }

    private static func progress(_ bytes: Int64) -> DownloadEvent {
        .progress(DownloadProgress(completedBytes: bytes, totalBytes: 10, bytesPerSecond: 0, estimatedTimeRemaining: nil))
    }

    @Test("a late observer first gets what happened (progress collapsed), then each event, then the result, once")
    func lateObserver() {
        let queue = EventQueue()
        queue.yield(.warning("a"))
        queue.yield(Self.progress(1))
        queue.yield(Self.progress(2))
        let seen = SharedStateLock<[String]>([])
        queue.observe { observation in seen.withLock { $0.append(Self.describe(observation)) } }
        queue.yield(Self.progress(3))
        queue.yield(Self.progress(4))
        queue.finish(.success(Self.done))
        queue.yield(.warning("after the end"))
        queue.finish(.failure(DownloadError(.cancelled, "too late")))
        #expect(seen.withLock { $0 } == ["a", "progress 2", "progress 3", "progress 4", "finished", "ended"])
    }

    @Test("an observer added after the end gets the history and the result")
    func observerAfterTheEnd() {
        let queue = EventQueue()
        queue.yield(.warning("a"))
        queue.finish(.failure(DownloadError(.httpStatus, "404")))
        let seen = SharedStateLock<[String]>([])
        queue.observe { observation in seen.withLock { $0.append(Self.describe(observation)) } }
        #expect(seen.withLock { $0 } == ["a", "failed httpStatus"])
    }

    /// An observer that produces an event itself (as a cancel from a callback does) must not
    /// deadlock, and its event comes after the one being delivered.
    @Test("an event produced from inside the observer is delivered after the current one, without deadlock")
    func reentrantYield() {
        let queue = EventQueue()
        let seen = SharedStateLock<[String]>([])
        queue.observe { observation in
            let name = Self.describe(observation)
            seen.withLock { $0.append(name) }
            if name == "a" {
                queue.yield(.warning("from inside"))
                seen.withLock { $0.append("a returned") }
            }
        }
        queue.yield(.warning("a"))
        queue.yield(.warning("b"))
        queue.finish(.success(Self.done))
        #expect(seen.withLock { $0 } == ["a", "a returned", "from inside", "b", "finished", "ended"])
    }

    /// Progress comes from the reporter, which keeps its snapshots in order under a lock of its
    /// own: the observer must run after that lock is released, or a call back into the reporter
    /// from the observer would deadlock.
    @Test("an observer of progress may call back into the progress reporter")
    func callbackIntoTheReporter() {
        let queue = EventQueue()
        let reporter = ProgressReporter(events: queue, interval: .seconds(60), ticker: ProgressTicker())
        let seen = SharedStateLock<[String]>([])
        queue.observe { observation in
            seen.withLock { $0.append(Self.describe(observation)) }
            if case .event(.progress) = observation { reporter.finish() }   // re-entrant: a no-op once finished
        }
        reporter.start(total: 10, alreadyComplete: 0)
        reporter.add(4)
        reporter.finish()
        #expect(seen.withLock { $0 }.last == "progress 4")
    }

    @Test("a slow observer gets the newest progress snapshot, not each one it missed")
    func slowObserverCollapsesProgress() {
        let queue = EventQueue()
        let entered = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
        let seen = SharedStateLock<[String]>([])
        queue.observe { observation in
            let name = Self.describe(observation)
            seen.withLock { $0.append(name) }
            if name == "a" {
                entered.signal()
                release.wait()   // holds the delivery while the producer goes on
            }
        }
        let producer = DispatchGroup()
        producer.enter()
        Thread.detachNewThread {
            queue.yield(.warning("a"))   // this thread delivers, and waits in the observer
            producer.leave()
        }
        entered.wait()
        for bytes in 1...100 { queue.yield(Self.progress(Int64(bytes))) }   // queued: the other thread delivers
        queue.yield(.warning("b"))
        queue.yield(Self.progress(200))
        release.signal()
        producer.wait()
        #expect(seen.withLock { $0 } == ["a", "progress 100", "b", "progress 200"])
    }

    /// Producers are OS threads, not tasks: they block on the queue's lock and would hold up
    /// the other tests' tasks on the cooperative pool.
    @Test("events from many threads reach the observer one at a time, each thread's in its order, all of them")
    func manyProducers() {
        let queue = EventQueue()
        struct Seen { var inside = false, overlapped = false, last: [Int: Int] = [:], outOfOrder = false, count = 0 }
        let seen = SharedStateLock(Seen())
        queue.observe { observation in
            guard case .event(.warning(let text)) = observation else { return }
            let parts = text.split(separator: " ").compactMap { Int($0) }
            seen.withLock { seen in
                if seen.inside { seen.overlapped = true }
                seen.inside = true
                if let previous = seen.last[parts[0]], previous >= parts[1] { seen.outOfOrder = true }
                seen.last[parts[0]] = parts[1]
                seen.count += 1
            }
            if parts[1] % 100 == 0 { usleep(100) }   // a slow callback now and then: producers pile up behind it
            seen.withLock { $0.inside = false }
        }
        let producers = 4, events = 500
        let finished = DispatchGroup()
        for producer in 0..<producers {
            finished.enter()
            Thread.detachNewThread {
                for number in 0..<events { queue.yield(.warning("\(producer) \(number)")) }
                finished.leave()
            }
        }
        finished.wait()
        let result = seen.withLock { $0 }
        #expect(result.count == producers * events)
        #expect(!result.overlapped)
        #expect(!result.outOfOrder)
    }
}
