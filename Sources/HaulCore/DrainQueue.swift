/// Work queued while its owner holds a lock and carried out after it, by one thread at a time,
/// in the order it was queued.
///
/// A value kept inside the owner's locked state, so that queuing is ordered with the owner's
/// other changes. The thread whose ``append(_:)`` returns `true` drains: ``drain(take:run:)``
/// takes the batches with ``take(into:)`` under the lock and runs them outside it; items queued
/// meanwhile, by other threads or by the running items themselves, join the next batch instead
/// of starting a second drainer or a nested call.
package struct DrainQueue<Item> {
    private var items: [Item] = []
    /// Whether a thread is draining.
    package private(set) var isDraining = false

    package init() {}

    /// Queues `item`; `true` when the caller is to drain (no thread is).
    package mutating func append(_ item: Item) -> Bool {
        items.append(item)
        guard !isDraining else { return false }
        isDraining = true
        return true
    }

    /// Moves what is queued into `batch` (emptied first); `false`, and draining over, when
    /// nothing is.
    package mutating func take(into batch: inout [Item]) -> Bool {
        batch.removeAll(keepingCapacity: true)
        swap(&batch, &items)
        if batch.isEmpty { isDraining = false }
        return !batch.isEmpty
    }

    /// Runs batches, in order, until `take` (which calls ``take(into:)`` under the owner's lock)
    /// finds none.
    package static func drain(take: (inout [Item]) -> Bool, run: ([Item]) -> Void) {
        var batch: [Item] = []
        while take(&batch) { run(batch) }
    }
}

extension DrainQueue: Sendable where Item: Sendable {}
