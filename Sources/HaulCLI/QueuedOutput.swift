import HaulCore

/// An output whose writes are handed to a thread of its own: the thread that logs never waits
/// for the file or terminal behind it, and a burst of lines (100,000 downloads paused at once)
/// goes out in a few large writes instead of one each.
///
/// Text keeps its order within each stream. ``flush()`` waits until everything written so far
/// is out. When the system gives no thread, the writing thread writes the queue itself.
final class QueuedOutput: OutputSink {
    /// Text to write, or a closure that makes it on the output's thread.
    private enum Item {
        case text(String, StandardStream)
        case later(@Sendable () -> (String, StandardStream))
    }

    private let sink: any OutputSink
    /// The text not yet written, and whether the output's thread is writing.
    private let items = ConditionLock(DrainQueue<Item>())
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
        items.wait(until: nil) { $0.isDraining }
    }

    private func queue(_ item: Item) {
        let start = items.withLock { $0.append(item) }
        guard start else { return }
        do throws(ResourceError) {
            try thread.run(name: "haul-log") { [self] in drain() }
        } catch {
            drain()
        }
    }

    private func drain() {
        DrainQueue.drain(take: { batch in items.withLockBroadcasting { $0.take(into: &batch) } }, run: write)
    }

    /// Writes a batch with one write per stream.
    private func write(_ batch: [Item]) {
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
