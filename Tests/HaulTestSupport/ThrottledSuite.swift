import Foundation
import Testing

/// Runs a suite's tests beside everything else, but at most a few tests of all the suites that
/// carry this trait at once (twice as many as the machine has cores).
///
/// Plain `swift test` starts every test at once: on a 2-core machine several hundred tests,
/// each with its own server, downloads or `haul` processes, then ran together for most of a
/// minute, starving each other's timeouts and the exclusive suite running meanwhile (see
/// ``ExclusiveSuite``). Suites that start servers, processes or threads without pacing or
/// timing them carry this trait instead of `.exclusive`; `SuiteTraitsTests` holds the rule.
///
/// A test waits for its place at the test's scope, outside its time limit (which counts only
/// its test cases), and its test cases then run as the suite says (in parallel unless
/// `.serialized`).
public struct ThrottledSuite: SuiteTrait, TestTrait, TestScoping {
    /// `true`: every test of the suite, nested suites' included, takes a place (so it is a test
    /// trait too: the suite hands it to its tests).
    public var isRecursive: Bool { true }

    /// Itself for a test function (`testCase` is `nil` there), nothing for suites and test cases.
    public func scopeProvider(for test: Test, testCase: Test.Case?) -> Self? {
        !test.isSuite && testCase == nil ? self : nil
    }

    /// Runs the test (`function`) once it has a place, at low priority: the cooperative pool
    /// then runs medium-priority jobs before this test's, so an exclusive suite waiting for a
    /// prompt pool (``ExclusiveSuite``) is not kept waiting by the tests beside it. (The
    /// downloads' progress ticker is a thread of its own, not a job of the pool.)
    public func provideScope(for test: Test, testCase: Test.Case?,
                             performing function: @Sendable () async throws -> Void) async throws {
        await Self.places.acquire()
        defer { Self.places.release() }
        // (The task ends before this scope does, so `function` does not really escape.)
        try await withoutActuallyEscaping(function) { function in
            let body = Task(priority: .low) { try await function() }
            try await withTaskCancellationHandler { try await body.value } onCancel: { body.cancel() }
        }
    }

    /// The places of the process.
    static let places = Turnstile(width: 2 * ProcessInfo.processInfo.activeProcessorCount)
}

extension Trait where Self == ThrottledSuite {
    /// See ``ThrottledSuite``.
    public static var throttled: Self { ThrottledSuite() }
}
