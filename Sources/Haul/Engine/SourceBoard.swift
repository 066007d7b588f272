import HaulCore

/// The sources (the request's URL and its mirrors) of one segmented transfer, and what the
/// transfer learned of each: a pure state (no clock of its own, no socket), kept by
/// ``SegmentedTransfer/StateMachine`` under its lock.
///
/// Connections go to the usable source that gives each of its connections the most bytes per
/// second (a source not measured yet first, so that every one is measured), at most
/// ``connectionsPerSource`` each. A source is set aside for the rest of the download when it
/// fails for good (an answer no retry changes: a 404, another length, a range it does not
/// honour, a redirect refused) or more often in a row than the retries allow, and when its
/// connections stay under a quarter of the median source's for ``slowPeriod`` (it gives its
/// ranges to the others). Sources set aside for failures a later try may not meet (the network,
/// slowness) come back only when no usable source is left.
struct SourceBoard: Sendable {
    /// Whether a source takes new connections.
    enum Standing: Equatable, Sendable {
        case usable
        /// Set aside, with the reason shown to the user; `retryLater`: it may serve again when
        /// nothing else is left.
        case setAside(reason: String, retryLater: Bool)
    }

    /// What is known of one source.
    struct Source: Equatable, Sendable {
        var standing: Standing = .usable
        /// Connections it has now.
        var connections = 0
        /// Failures in a row (a connection that wrote bytes clears them).
        var failures = 0
        /// Bytes written from it in this transfer.
        var bytes: Int64 = 0
        /// Bytes written since the last measurement.
        var windowBytes: Int64 = 0
        /// Bytes per second per connection at the last measurement (`nil`: never measured).
        var rate: Double?
        /// Since when it has been far slower than the median (`nil`: it is not).
        var slowSince: ContinuousClock.Instant?
        /// When its first bytes were written.
        var firstWrite: ContinuousClock.Instant?
    }

    /// A source's connections measured under this fraction of the median's are slow.
    static let slowFraction = 0.25
    /// How long a source must stay slow before it is set aside.
    static let slowPeriod: Duration = .seconds(5)
    /// How often the rates are measured.
    static let measureInterval: Duration = .milliseconds(500)

    private(set) var sources: [Source]
    /// The most connections one source gets.
    let connectionsPerSource: Int
    private var lastMeasure: ContinuousClock.Instant?

    /// - Parameters:
    ///   - count: how many sources (at least 1).
    ///   - connectionsPerSource: the most connections each gets (at least 1).
    init(count: Int, connectionsPerSource: Int) {
        sources = Array(repeating: Source(), count: max(1, count))
        self.connectionsPerSource = max(1, connectionsPerSource)
    }

    /// Whether the transfer has more than one source (with one, nothing is ever set aside here).
    var hasMirrors: Bool { sources.count > 1 }

    /// Whether `index` takes connections.
    func isUsable(_ index: Int) -> Bool { sources[index].standing == .usable }

    /// The usable source for one more connection: never measured first (fewest connections,
    /// then the lowest index), then the highest rate per connection; `nil` when every usable
    /// source is full or none is left.
    func pick() -> Int? {
        let open = sources.indices.filter { sources[$0].standing == .usable && sources[$0].connections < connectionsPerSource }
        if let unmeasured = open.filter({ sources[$0].rate == nil }).min(by: { sources[$0].connections < sources[$1].connections }) {
            return unmeasured
        }
        return open.max { (sources[$0].rate ?? 0, -$0) < (sources[$1].rate ?? 0, -$1) }
    }

    /// A connection starts on `index`.
    mutating func connect(_ index: Int) { sources[index].connections += 1 }

    /// A connection of `index` ended or moved to another source.
    mutating func disconnect(_ index: Int) { sources[index].connections = max(0, sources[index].connections - 1) }

    /// `count` bytes from `index` were written at `now`; a connection that writes clears its failures.
    mutating func wrote(_ count: Int64, from index: Int, at now: ContinuousClock.Instant) {
        guard count > 0 else { return }
        if sources[index].firstWrite == nil { sources[index].firstWrite = now }
        sources[index].bytes += count
        sources[index].windowBytes += count
        sources[index].failures = 0
    }

    /// A request or body from `index` failed with `error`: the source is set aside when no retry
    /// would change the answer, or when it failed more than `maximumRetries` times in a row.
    ///
    /// - Returns: whether this failure set it aside (only with mirrors: a lone source's failures
    ///   are the transfer's, as without this board).
    mutating func failed(_ index: Int, error: DownloadError, maximumRetries: Int) -> Bool {
        guard hasMirrors, sources[index].standing == .usable else { return false }
        sources[index].failures += 1
        guard !error.isRetryable || sources[index].failures > maximumRetries else { return false }
        sources[index].standing = .setAside(reason: error.message, retryLater: error.isRetryable)
        return true
    }

    /// Sets `index` aside for the rest of the download (it sent bytes that failed a check).
    ///
    /// - Returns: whether it was usable until now.
    mutating func setAside(_ index: Int, reason: String) -> Bool {
        guard sources[index].standing == .usable else { return false }
        sources[index].standing = .setAside(reason: reason, retryLater: false)
        return true
    }

    /// When no source is usable: brings back the ones set aside for failures a later try may not
    /// meet (their failure counts start again). Returns whether any came back.
    mutating func reviveRetryable() -> Bool {
        guard !sources.contains(where: { $0.standing == .usable }) else { return true }
        var revived = false
        for index in sources.indices {
            if case .setAside(_, true) = sources[index].standing {
                sources[index].standing = .usable
                sources[index].failures = 0
                sources[index].slowSince = nil
                revived = true
            }
        }
        return revived
    }
}

extension SourceBoard {
    /// Bytes per second `index` gave since its first bytes, as of `now` (0 before any byte).
    func averageRate(_ index: Int, now: ContinuousClock.Instant) -> Double {
        guard let first = sources[index].firstWrite else { return 0 }
        return Double(sources[index].bytes) / max((now - first).seconds, 0.001)
    }

    /// Whether a connection of `faster` should take over the rest of one of `slower` near the
    /// end of a transfer: `faster` gives at least twice the bytes per second.
    func outpaces(_ faster: Int, _ slower: Int, now: ContinuousClock.Instant) -> Bool {
        faster != slower && averageRate(faster, now: now) >= 2 * averageRate(slower, now: now) && averageRate(faster, now: now) > 0
    }

    /// Measures the rates once every ``measureInterval`` and sets aside the sources that stayed
    /// far slower than the median for ``slowPeriod``.
    ///
    /// - Returns: the sources set aside now (their connections should give their ranges back).
    mutating func measure(now: ContinuousClock.Instant) -> [Int] {
        guard hasMirrors else { return [] }
        guard let last = lastMeasure else {
            lastMeasure = now
            return []
        }
        let elapsed = (now - last).seconds
        guard now - last >= Self.measureInterval, elapsed > 0 else { return [] }
        lastMeasure = now
        for index in sources.indices where sources[index].connections > 0 {
            sources[index].rate = Double(sources[index].windowBytes) / elapsed / Double(sources[index].connections)
        }
        for index in sources.indices { sources[index].windowBytes = 0 }
        return setAsideSlow(now: now)
    }

    /// The sources measured under ``slowFraction`` of the median for ``slowPeriod``, set aside.
    private mutating func setAsideSlow(now: ContinuousClock.Instant) -> [Int] {
        let measured = sources.indices.filter { sources[$0].standing == .usable && sources[$0].connections > 0 && sources[$0].rate != nil }
        guard measured.count >= 2 else { return [] }
        let rates = measured.map { sources[$0].rate! }.sorted()
        let median = rates.count % 2 == 1 ? rates[rates.count / 2] : (rates[rates.count / 2 - 1] + rates[rates.count / 2]) / 2
        var setAside: [Int] = []
        for index in measured {
            guard sources[index].rate! < median * Self.slowFraction else {
                sources[index].slowSince = nil
                continue
            }
            let since = sources[index].slowSince ?? now
            sources[index].slowSince = since
            guard now - since >= Self.slowPeriod else { continue }
            let reason = "far slower than the other sources (\(Self.shown(sources[index].rate!)) per connection, "
                + "against a median of \(Self.shown(median)))"
            sources[index].standing = .setAside(reason: reason, retryLater: true)
            setAside.append(index)
        }
        return setAside
    }

    /// A rate as people read it: `1.5 MB/s`.
    static func shown(_ rate: Double) -> String {
        let units = ["B/s", "kB/s", "MB/s", "GB/s"]
        var value = rate
        var unit = 0
        while value >= 1000, unit < units.count - 1 {
            value /= 1000
            unit += 1
        }
        return unit == 0 ? "\(Int(value)) B/s" : "\((value * 10).rounded() / 10) \(units[unit])"
    }
}
