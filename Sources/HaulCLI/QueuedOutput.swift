import HaulCore

/// An output whose writes are handed to a thread of its own: the thread that logs never waits
/// for the file or terminal behind it, and a burst of lines (100,000 downloads paused at once)
/// goes out in a few large writes instead of one each.
///
/// Text keeps its order within each stream. ``flush()`` waits until everything written so far
/// is out.
final class QueuedOutput: OutputSink {
    /// Text to write, or a closure that makes it on the output's thread.
    private enum Item {
        case text(String, StandardStream)
        case later(@Sendable () -> (String, StandardStream))
    }

    private struct State {
        var items: [Item] = []
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
        queue(.text(text, stream))
    }

    /// Queues the text `make` returns, made on the output's thread when its turn comes: the
    /// caller pays for no lookup or formatting.
    func write(later make: @escaping @Sendable () -> (String, StandardStream)) {
        queue(.later(make))
    }

    /// Waits until every write so far has reached the sink.
    func flush() {
        state.wait(until: nil) { $0.draining }
    }

    private func queue(_ item: Item) {
        let start = state.withLock { state -> Bool in
            state.items.append(item)
            guard !state.draining else { return false }
            state.draining = true
            return true
        }
        if start { thread.run(name: "haul-log") { [self] in drain() } }
    }

    private func drain() {
        var batch: [Item] = []
        while true {
            batch.removeAll(keepingCapacity: true)
            state.withLockBroadcasting { state in
                swap(&batch, &state.items)
                if batch.isEmpty { state.draining = false }
            }
            if batch.isEmpty { return }
            var output = "", error = ""
            for item in batch {
                let (text, stream): (String, StandardStream)
                switch item {
                case .text(let value, let to): (text, stream) = (value, to)
                case .later(let make): (text, stream) = make()
                }
                if stream == .output { output += text } else { error += text }
            }
            if !output.isEmpty { sink.write(output, to: .output) }
            if !error.isEmpty { sink.write(error, to: .error) }
        }
    }
}
