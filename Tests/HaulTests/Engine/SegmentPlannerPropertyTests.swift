import HaulTestSupport
import Testing
@testable import Haul

/// Random advance/finish/fail/retry sequences, checking the planner's invariants after every step.
@Suite struct SegmentPlannerPropertyTests {
    @Test(arguments: 0..<40)
    func randomRunsKeepEveryInvariant(batch: Int) {
        for run in 0..<25 {
            let seed = UInt64(batch * 1000 + run)
            var simulation = PlannerSimulation(seed: seed)
            let failure = simulation.run()
            #expect(failure == nil, "seed \(seed)")
            if failure != nil { return }
        }
    }
}

/// One random download driven through a ``SegmentPlanner``: returns the first broken invariant, or `nil`.
private struct PlannerSimulation {
    var generator: SplitMix64
    let total: Int64
    let connections: Int
    let minimum: Int64
    let initial: [Range<Int64>]

    init(seed: UInt64) {
        generator = SplitMix64(seed: seed)
        // Byte-sized files with tiny minimums, and MiB-sized ones with KiB..MiB minimums.
        if Bool.random(using: &self.generator) {
            total = Int64.random(in: 0...3000, using: &self.generator)
            minimum = Int64.random(in: 1...200, using: &self.generator)
        } else {
            total = Int64.random(in: 0...(64 << 20), using: &self.generator)
            minimum = Int64.random(in: 1...(4 << 20), using: &self.generator)
        }
        connections = Int.random(in: 1...16, using: &self.generator)
        var ranges: [Range<Int64>] = []
        for _ in 0..<Int.random(in: 0...6, using: &self.generator) where total > 0 {
            let start = Int64.random(in: 0..<total, using: &self.generator)
            let end = Int64.random(in: start...total, using: &self.generator)
            ranges.append(start..<end)
        }
        initial = ranges
    }

    mutating func run() -> String? {
        var planner = SegmentPlanner(total: total, completed: initial, maximumConnections: connections, minimumSegment: minimum)
        let context = "total \(total) connections \(connections) minimum \(minimum) completed \(initial)"
        if total == 0 && !planner.isComplete { return "empty file not complete: \(context)" }
        let gaps = planner.unassigned
        let gapBytes = gaps.reduce(Int64(0)) { $0 + ($1.upperBound - $1.lowerBound) }

        let segments = planner.start()
        if let problem = checkStart(segments, gaps: gaps, gapBytes: gapBytes) { return "\(problem): \(context)" }
        if let problem = Self.check(planner, previous: []) { return "after start: \(problem): \(context)" }

        var pendingRetry: Set<Int> = []
        var steps = 0
        while !planner.activeWorkers.isEmpty || !pendingRetry.isEmpty {
            steps += 1
            if steps > 200_000 { return "no end after \(steps) steps: \(context)" }
            let before = planner.completed
            let workers = planner.activeWorkers + pendingRetry.sorted()
            let worker = workers[Int.random(in: 0..<workers.count, using: &generator)]
            if pendingRetry.contains(worker) {
                pendingRetry.remove(worker)
                if let problem = handOut(&planner, to: worker, retry: true) { return "retry: \(problem): \(context)" }
            } else {
                let position = planner.position(of: worker)!
                let end = planner.end(of: worker)
                switch Int.random(in: 0..<10, using: &generator) {
                case 0:
                    let rest = planner.failed(worker: worker)
                    let expected = position < end ? SegmentPlanner.Segment(worker: worker, start: position, end: end) : nil
                    if rest != expected { return "failed returned \(String(describing: rest)), expected \(String(describing: expected))" }
                    pendingRetry.insert(worker)   // the engine retries (asks for work) after a backoff
                case 1, 2:
                    // Finishes: mostly at its end, sometimes early (gives its rest back).
                    if Int.random(in: 0..<4, using: &generator) > 0 { planner.advance(worker: worker, to: end) }
                    if let problem = handOut(&planner, to: worker, retry: false) { return "finish: \(problem): \(context)" }
                case 3:
                    // Wrote past a shrunk end (a race the engine allows): only up to the end counts.
                    planner.advance(worker: worker, to: end + Int64.random(in: 1...1000, using: &generator))
                    if planner.position(of: worker) != end { return "advance past end not clamped" }
                default:
                    if position < end {
                        let step = Bool.random(using: &generator)
                            ? Int64.random(in: 1...min(end - position, 64 << 10), using: &generator)
                            : Int64.random(in: 1...(end - position), using: &generator)
                        planner.advance(worker: worker, to: position + step)
                        if planner.position(of: worker) != position + step { return "advance did not move to \(position + step)" }
                    }
                }
            }
            if let problem = Self.check(planner, previous: before) { return "step \(steps): \(problem): \(context)" }
        }
        if !planner.isComplete { return "every worker stopped before the end: \(planner.completed) \(planner.unassigned): \(context)" }
        if total > 0 && planner.completed != [0..<total] { return "completed \(planner.completed): \(context)" }
        return nil
    }

    /// The first segments: few enough, in file order, starting at the first gap, splits no smaller than the minimum.
    private func checkStart(_ segments: [SegmentPlanner.Segment], gaps: [Range<Int64>], gapBytes: Int64) -> String? {
        if gaps.isEmpty { return segments.isEmpty ? nil : "segments for a complete file" }
        if segments.isEmpty || segments.count > connections { return "\(segments.count) segments" }
        if segments.map(\.worker) != Array(0..<segments.count) { return "worker ids \(segments.map(\.worker))" }
        if segments[0].start != gaps[0].lowerBound { return "first segment starts at \(segments[0].start)" }
        if gapBytes < 2 * minimum && segments.count != 1 { return "\(segments.count) segments for \(gapBytes) bytes" }
        let wanted = Int(min(Int64(connections), max(1, gapBytes / minimum)))
        if segments.count < min(wanted, gaps.count) { return "\(segments.count) segments leave gaps uncovered" }
        for segment in segments {
            guard let gap = gaps.first(where: { $0.contains(segment.start) }), segment.end <= gap.upperBound else {
                return "segment \(segment) outside the gaps"
            }
            let wholeGap = segment.start == gap.lowerBound && segment.end == gap.upperBound
            if !wholeGap && segment.end - segment.start < minimum { return "split piece \(segment) under the minimum" }
        }
        return nil
    }

    /// Calls `finished` (or `retry`) and checks what it handed out against what was available.
    private mutating func handOut(_ planner: inout SegmentPlanner, to worker: Int, retry: Bool) -> String? {
        let ownRest: Range<Int64>? = planner.position(of: worker).map { $0..<planner.end(of: worker) }
        var free = planner.unassigned
        if let ownRest, !ownRest.isEmpty { SegmentPlanner.insert(ownRest, into: &free) }
        let others = planner.inFlight.filter { $0.worker != worker }
        let largest = others.map { $0.end - $0.start }.max() ?? 0
        let next = retry ? planner.retry(worker: worker) : planner.finished(worker: worker)
        guard let next else {
            if !free.isEmpty { return "nothing handed out while \(free) is free" }
            if largest >= 2 * minimum { return "nothing handed out while \(largest) bytes are left in one range" }
            return nil
        }
        if next.worker != worker { return "segment for worker \(next.worker)" }
        if !free.isEmpty {
            return free.contains(next.start..<next.end) ? nil : "handed out \(next), not a free gap of \(free)"
        }
        // Stolen: from a worker with the largest remaining range, both halves at least the minimum.
        guard let victim = others.first(where: { $0.end == next.end && $0.start < next.start }) else {
            return "stolen \(next) from nobody"
        }
        if victim.end - victim.start != largest { return "stole from \(victim), not the largest (\(largest))" }
        if next.start - victim.start < minimum || next.end - next.start < minimum { return "split \(victim) at \(next.start)" }
        if planner.end(of: victim.worker) != next.start { return "victim end not shrunk" }
        return nil
    }

    /// Completed, in-flight and unassigned ranges tile `[0, total)`; completed is merged and only grows.
    private static func check(_ planner: SegmentPlanner, previous: [Range<Int64>]) -> String? {
        let completed = planner.completed
        for (index, range) in completed.enumerated() {
            if range.isEmpty || range.lowerBound < 0 || range.upperBound > planner.total { return "bad completed range \(range)" }
            if index > 0 && completed[index - 1].upperBound >= range.lowerBound { return "completed not merged: \(completed)" }
        }
        for range in previous where !completed.contains(where: { $0.lowerBound <= range.lowerBound && range.upperBound <= $0.upperBound }) {
            return "completed shrank: \(previous) -> \(completed)"
        }
        if planner.activeWorkers.count > planner.maximumConnections { return "\(planner.activeWorkers.count) workers" }
        if planner.activeWorkers.contains(where: { $0 < 0 || $0 >= planner.maximumConnections }) { return "worker ids \(planner.activeWorkers)" }
        let inFlight = planner.inFlight.map { $0.start..<$0.end }
        if inFlight.contains(where: { $0.lowerBound > $0.upperBound }) { return "negative in-flight range" }
        let tiles = (completed + inFlight.filter { !$0.isEmpty } + planner.unassigned).sorted { $0.lowerBound < $1.lowerBound }
        var position: Int64 = 0
        for tile in tiles {
            if tile.lowerBound != position { return "tiles \(tiles) break at \(position)" }
            position = tile.upperBound
        }
        if position != planner.total { return "tiles end at \(position), not \(planner.total)" }
        let complete = completed == [0..<planner.total] || planner.total == 0
        if planner.isComplete != complete { return "isComplete \(planner.isComplete) with \(completed)" }
        return nil
    }
}
