import Testing

/// Runs a suite alone among the exclusive ones: while its tests run, no other suite that carries
/// this trait does.
///
/// Suites that pace real transfers, time them, measure CPU time, kill processes at random
/// moments or mount scratch file systems carry it together with `.serialized` (their own tests
/// one at a time). Run side by side on a 2-core machine they starved each other's timing and
/// failed. Every other suite runs beside them, its tests not depending on time (those that
/// start servers or processes `.throttled`, see ``ThrottledSuite``). `SuiteTraitsTests` holds
/// the rule and says which code counts as pacing; each exclusive suite says why on a
/// `/// Exclusive:` line of its doc comment.
///
/// The suite waits for its turn outside any test's time limit (a suite has none; a test's limit
/// would count the wait). A suite nested in one that holds the turn runs at once.
public struct ExclusiveSuite: SuiteTrait, TestScoping {
    /// `false`: the trait acts on the suite it is written on, not on each test inside it.
    public var isRecursive: Bool { false }

    /// Itself for the suite (`testCase` is `nil` there), nothing for its tests and test cases.
    public func scopeProvider(for test: Test, testCase: Test.Case?) -> Self? {
        test.isSuite && testCase == nil ? self : nil
    }

    /// Runs the whole suite (`function`) once this suite has the turn, or at once inside a suite
    /// that holds it.
    public func provideScope(for test: Test, testCase: Test.Case?,
                             performing function: @Sendable () async throws -> Void) async throws {
        if Self.holdsTurn { return try await function() }
        // On threads of its own, from the wait for the turn on: the cooperative pool has one
        // thread per core, and tests of other suites that block them (a sync test writing to a
        // busy disk) would stall the hand-over of the turn and this suite's timing. Its tests
        // and their child tasks inherit the preference.
        try await withTaskExecutorPreference(Self.threads) {
            await Self.turn.acquire()
            defer { Self.turn.release() }
            await Self.waitForPromptPool()
            try await Self.$holdsTurn.withValue(true) { try await function() }
        }
    }

    /// Waits (a minute at most) until the cooperative pool runs a medium-priority job within
    /// 20 ms, so a paced suite does not start while the pool is still crowded. At the start of a
    /// run, when every pure test is queued there at once, that takes a few seconds; later it is
    /// at once. (The downloads' progress ticker is a thread of its own, not a job of the pool.)
    static func waitForPromptPool() async {
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            let start = ContinuousClock.now
            await Task.detached(priority: .medium) {}.value
            if ContinuousClock.now - start < .milliseconds(20) { return }
            try? await Task.sleep(for: .milliseconds(50))
        }
    }

    /// Whether the current task runs inside a suite that holds the turn.
    @TaskLocal static var holdsTurn = false
    /// The one turn of the process.
    static let turn = Turnstile()
    /// The threads the exclusive suites run on.
    static let threads = ThreadsExecutor(threads: 2, name: "exclusive-suite")
}

extension Trait where Self == ExclusiveSuite {
    /// See ``ExclusiveSuite``.
    public static var exclusive: Self { ExclusiveSuite() }
}
