import HaulCore
import Testing

extension ThreadPool {
    /// Runs `body` on a thread of the pool, as a test wants it; a thread the system refuses is
    /// an issue of the test, and `body` then runs on the calling thread so nothing waits for it
    /// forever.
    package func runInTest(name: StaticString = "haul-test", _ body: @escaping @Sendable () -> Void) {
        do throws(ResourceError) {
            try run(name: name, body)
        } catch {
            Issue.record("no thread for the test: \(error)")
            body()
        }
    }

    /// ``runAlone(name:_:)`` as a test wants it (see ``runInTest(name:_:)``).
    package func runAloneInTest(_ body: @escaping @Sendable () -> Void) {
        do throws(ResourceError) {
            try runAlone(name: "haul-test", body)
        } catch {
            Issue.record("no thread for the test: \(error)")
            body()
        }
    }
}
