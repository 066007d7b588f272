import Testing

/// Polls `condition` every 10 ms until it holds or `timeout` passes: the one way tests wait for
/// what another thread or process does. The timeout only bounds a failure; a passing test waits
/// for the condition, never for a clock.
///
/// The condition runs in the caller's isolation (a `@MainActor` test reads its model directly).
///
/// - Returns: whether it held; when it did not, an issue is also recorded at the caller's line.
@discardableResult
package func eventually(timeout: Duration = .seconds(20), sourceLocation: SourceLocation = #_sourceLocation,
                        isolation: isolated (any Actor)? = #isolation, _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    while !condition() {
        guard ContinuousClock.now < deadline else {
            Issue.record("a condition did not hold within \(timeout)", sourceLocation: sourceLocation)
            return false
        }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return true
}
