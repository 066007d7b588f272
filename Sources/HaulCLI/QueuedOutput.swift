import HaulCore

/// An output whose writes are handed to a thread of its own: the thread that logs never waits
/// for the file or terminal behind it, and a burst of lines (100,000 downloads paused at once)
/// goes out in a few large writes instead of one each.
///
/// Text keeps its order within each stream. ``flush()`` waits until everything written so far
/// is out.
final class QueuedOutput: OutputSink {
    private struct State {
        var output = ""
        var error = ""
        var draining = false
    }

    private let sink: any OutputSink
    private let state = ConditionLock(State())
    private let thread = ThreadPool(maximumThreads: 1)

    /// - Parameter sink: where the text goes.
    init(_ sink: any OutputSink) {
        self.sink = sink
    }

    func write(_ text: String, to stream: StandardStream) {
        let start = state.withLock { state -> Bool in
            if stream == .output { state.output += text } else { state.error += text }
            guard !state.draining else { return false }
            state.draining = true
            return true
        }
        if start { thread.run(name: "haul-log") { [self] in drain() } }
    }

    /// Waits until every write so far has reached the sink.
    func flush() {
        state.wait(until: nil) { $0.draining }
    }

    private func drain() {
        while true {
            let (output, error) = state.withLockBroadcasting { state -> (String, String) in
                defer { (state.output, state.error) = ("", "") }
                if state.output.isEmpty && state.error.isEmpty { state.draining = false }
                return (state.output, state.error)
            }
            if output.isEmpty && error.isEmpty { return }
            if !output.isEmpty { sink.write(output, to: .output) }
            if !error.isEmpty { sink.write(error, to: .error) }
        }
    }
}
