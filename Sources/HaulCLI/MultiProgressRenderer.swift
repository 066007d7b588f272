import Haul

/// Turns the progress of several downloads into terminal text; pure: no clock, no output of its own.
///
/// Downloads are told apart by an integer the caller chooses (its position in the run). The
/// caller passes every event with the time it happened and writes the returned text to
/// standard error, from one place only.
///
/// - Interactive (a TTY): a block redrawn in place — one line per running download (name,
///   percent, bar, bytes, speed, ETA; at most ``maximumLines``) and a total line (downloads done
///   of all, bytes, overall speed, ETA). The block is redrawn by moving the cursor up to its
///   first line and clearing to the end of the screen, at most ``redrawInterval`` apart; every
///   line of the block stays narrower than ``width``. A download that ends prints one permanent
///   line above the block (`name: done, ...`), as does any ``message(_:at:)``; those lines are
///   not cut to the width (an error stays whole). ``end(at:)`` replaces the block with a final
///   total line.
/// - Plain (not a TTY): a line per event of note (started, done, messages such as failures and
///   retries) and a total line every ``summaryInterval``; no escape codes.
///
/// The overall speed is a moving average (``SpeedMeter``) of the bytes transferred by all
/// downloads; the overall ETA is known once no download is queued and every running one has a
/// known length.
struct MultiProgressRenderer {
    /// Redraw in place or append plain lines.
    typealias Mode = ProgressRenderer.Mode

    /// Escape sequence: clear from the cursor to the end of the screen.
    static let clearToEnd = "\u{1B}[J"
    /// Escape sequence: clear the whole current line.
    static let clearLine = "\u{1B}[2K"

    private struct Entry {
        var name: String
        var startTime: Duration
        var resumedFrom: Int64
        var latest: DownloadProgress
        var spinner = 0
    }

    let mode: Mode
    /// The terminal width; lines are kept one column narrower so the cursor never wraps.
    var width: Int
    /// How many downloads are in the run (running, queued and ended).
    let downloadCount: Int
    /// The most download lines the block shows; the others are counted on one more line.
    let maximumLines: Int
    /// The shortest time between two interactive redraws caused by progress.
    let redrawInterval: Duration
    /// The time between two plain total lines.
    let summaryInterval: Duration

    private var entries: [Int: Entry] = [:]
    /// Running downloads, in the order they started.
    private var order: [Int] = []
    private var succeeded = 0
    private var failed = 0
    /// Bytes of downloads that ended (their final size, or what was on disk when they failed).
    private var endedBytes: Int64 = 0
    /// Bytes transferred (not resumed) by downloads that ended.
    private var endedTransferred: Int64 = 0
    private var meter = SpeedMeter()
    private var firstEvent: Duration?
    private var throttle: Throttle
    /// Lines of the block now on screen (0: none); the cursor is at the end of its last line.
    private var blockLines = 0

    /// Creates a renderer.
    ///
    /// - Parameters:
    ///   - mode: interactive or plain.
    ///   - width: the terminal width in columns.
    ///   - downloadCount: how many downloads the run has.
    ///   - maximumLines: the most download lines shown at once (default 10).
    ///   - redrawInterval: the shortest time between redraws (~10 per second).
    ///   - summaryInterval: the time between plain total lines (default 5 s).
    init(mode: Mode, width: Int, downloadCount: Int, maximumLines: Int = 10,
         redrawInterval: Duration = .milliseconds(100), summaryInterval: Duration = .seconds(5)) {
        self.mode = mode
        self.width = width
        self.downloadCount = downloadCount
        self.maximumLines = max(1, maximumLines)
        self.redrawInterval = redrawInterval
        self.summaryInterval = summaryInterval
        self.throttle = Throttle(interval: mode == .interactive ? redrawInterval : summaryInterval)
    }

    // MARK: - Events

    /// Download `id` started: it gets a line in the block (plain: a `started` line).
    mutating func start(id: Int, name: String, totalBytes: Int64?, resumedFrom: Int64, servers: Int = 1, at now: Duration) -> String {
        noteTime(now)
        let printable = HumanFormat.printable(name)
        if entries[id] == nil { order.append(id) }
        entries[id] = Entry(name: printable, startTime: now, resumedFrom: resumedFrom,
                            latest: DownloadProgress(completedBytes: resumedFrom, totalBytes: totalBytes,
                                                     bytesPerSecond: 0, estimatedTimeRemaining: nil))
        record(at: now)
        switch mode {
        case .interactive: return redrawNow(at: now)
        case .plain:
            return ProgressRenderer.startedLine(name: printable, totalBytes: totalBytes, resumedFrom: resumedFrom, servers: servers) + "\n"
        }
    }

    /// New progress of download `id`: the redraw (plain: a total line when one is due), or `""`.
    mutating func update(id: Int, _ progress: DownloadProgress, at now: Duration) -> String {
        noteTime(now)
        guard var entry = entries[id] else { return "" }
        entry.latest = progress
        entry.spinner += 1
        entries[id] = entry
        record(at: now)
        return redrawIfDue(at: now)
    }

    /// Time passed without an event: lets the speed fall during a stall and the plain total
    /// line come on time.
    mutating func tick(at now: Duration) -> String {
        noteTime(now)
        record(at: now)
        return redrawIfDue(at: now)
    }

    /// Download `id` succeeded with `byteCount` bytes, or ended without downloading, which
    /// `note` then says (the file exists and is skipped, or an earlier run finished it): one
    /// permanent line, and the block without it.
    mutating func finish(id: Int, name: String, byteCount: Int64, note: String? = nil, at now: Duration) -> String {
        noteTime(now)
        let entry = remove(id)
        succeeded += 1
        endedBytes += byteCount
        endedTransferred += note != nil ? 0 : max(0, byteCount - (entry?.resumedFrom ?? 0))
        record(at: now)
        let printable = entry?.name ?? HumanFormat.printable(name)
        let line = note.map { "\(printable): \($0)" }
            ?? ProgressRenderer.doneLine(name: printable, byteCount: byteCount,
                                        transferred: byteCount - (entry?.resumedFrom ?? 0),
                                        seconds: max(0, (now - (entry?.startTime ?? now)).secondsValue))
        return permanent(line, at: now)
    }

    /// Download `id` failed (or was interrupted): prints `line` (its `haul: url: message`) above
    /// the block, and the block without it.
    mutating func fail(id: Int, line: String, at now: Duration) -> String {
        noteTime(now)
        if let entry = remove(id) {
            endedBytes += entry.latest.completedBytes
            endedTransferred += max(0, entry.latest.completedBytes - entry.resumedFrom)
        }
        failed += 1
        record(at: now)
        return permanent(line, at: now)
    }

    /// Prints a whole line (a retry notice, a warning) above the block.
    mutating func message(_ line: String, at now: Duration) -> String {
        noteTime(now)
        return permanent(line, at: now)
    }

    /// The run is over (or interrupted): the block gives way to a final total line.
    mutating func end(at now: Duration) -> String {
        noteTime(now)
        record(at: now)
        let line = finalLine(at: now)
        switch mode {
        case .interactive:
            let text = moveToBlockStart() + line + "\n"
            blockLines = 0
            return text
        case .plain:
            return line + "\n"
        }
    }

    // MARK: - Drawing

    private mutating func noteTime(_ now: Duration) {
        guard firstEvent == nil else { return }
        firstEvent = now
        if mode == .plain { throttle.record(now) }   // the first total line comes one interval in
    }

    private mutating func remove(_ id: Int) -> Entry? {
        order.removeAll { $0 == id }
        return entries.removeValue(forKey: id)
    }

    /// Feeds the meter the bytes transferred so far by every download.
    private mutating func record(at now: Duration) {
        let running = order.reduce(Int64(0)) { sum, id in
            guard let entry = entries[id] else { return sum }
            return sum + max(0, entry.latest.completedBytes - entry.resumedFrom)
        }
        meter.record(endedTransferred + running, at: now)
    }

    private mutating func permanent(_ line: String, at now: Duration) -> String {
        switch mode {
        case .interactive:
            // Whole, even when wider than the terminal: the block is drawn below it afterwards.
            let text = moveToBlockStart() + line + "\n"
            blockLines = 0
            return text + drawBlock(at: now)
        case .plain:
            return line + "\n"
        }
    }

    private mutating func redrawIfDue(at now: Duration) -> String {
        guard throttle.permits(at: now) else { return "" }
        switch mode {
        case .interactive:
            return moveToBlockStart() + drawBlock(at: now)
        case .plain:
            return totalLine(separator: ", ") + "\n"
        }
    }

    private mutating func redrawNow(at now: Duration) -> String {
        throttle.record(now)
        return moveToBlockStart() + drawBlock(at: now)
    }

    /// Returns the cursor to the start of the block's first line and clears the block.
    private func moveToBlockStart() -> String {
        guard blockLines > 0 else { return "" }
        return "\r" + (blockLines > 1 ? "\u{1B}[\(blockLines - 1)A" : "") + Self.clearToEnd
    }

    /// The block (download lines and the total line) from the cursor on, which must be at the
    /// start of an empty line; leaves the cursor at the end of the last line.
    private mutating func drawBlock(at now: Duration) -> String {
        throttle.record(now)
        let lines = blockText()
        blockLines = lines.count
        return lines.map { Self.clearLine + $0 }.joined(separator: "\n")
    }

    /// The lines of the block, each narrower than ``width``.
    ///
    /// The download lines share one name column, one arrangement and one bar width, chosen for
    /// the widest line in the richest arrangement that fits them all, so percents and bars line up.
    func blockText() -> [String] {
        let limit = max(1, width - 1)
        let shown = order.prefix(maximumLines).compactMap { entries[$0] }
        let parts = shown.map { ProgressRenderer.parts($0.latest, tail: .eta, spinner: $0.spinner) }
        let longestName = min(24, shown.map { HumanFormat.displayWidth($0.name) }.max() ?? 0)
        var nameWidth = min(8, longestName)
        var barWidth = ProgressRenderer.minimumBarWidth
        var richest = 0
        if let arrangements = parts.first?.arrangements.indices {
            for index in arrangements {
                let widest = parts.map { $0.fixedWidth(index) }.max() ?? 0
                guard limit - widest >= nameWidth else { continue }
                nameWidth = min(longestName, limit - widest)
                barWidth = min(ProgressRenderer.maximumBarWidth, ProgressRenderer.minimumBarWidth + limit - widest - nameWidth)
                richest = index
                break
            }
        }
        var lines = zip(shown, parts).map { entry, parts in
            ProgressRenderer.line(name: entry.name, parts: parts, width: width, nameWidth: nameWidth, barWidth: barWidth,
                                  richest: richest)
        }
        if order.count > shown.count {
            lines.append(HumanFormat.truncate("… and \(order.count - shown.count) more running", toWidth: limit))
        }
        lines.append(totalLine(separator: "  "))
        return lines
    }

    // MARK: - Totals

    /// Downloads neither running nor ended.
    private var queued: Int { max(0, downloadCount - succeeded - failed - order.count) }

    /// Bytes on disk of every download that started.
    private var completedBytes: Int64 {
        endedBytes + order.reduce(Int64(0)) { $0 + (entries[$1]?.latest.completedBytes ?? 0) }
    }

    /// Bytes the run still has to transfer, when known: nothing queued and every length known.
    private var remainingBytes: Int64? {
        guard queued == 0 else { return nil }
        var remaining: Int64 = 0
        for id in order {
            guard let entry = entries[id], let total = entry.latest.totalBytes else { return nil }
            remaining += max(0, total - entry.latest.completedBytes)
        }
        return remaining
    }

    /// `Total  2/5 done, 1 failed, 1 queued  120.0 MiB / 300.0 MiB  12.3 MiB/s  ETA 0:42`, its
    /// least important pieces dropped first when the width is short (interactive).
    func totalLine(separator: String) -> String {
        var counts = "\(succeeded)/\(downloadCount) done"
        if failed > 0 { counts += ", \(failed) failed" }
        if queued > 0 { counts += ", \(queued) queued" }
        let done = completedBytes
        let remaining = remainingBytes
        let bytes = remaining.map { HumanFormat.bytes(done) + " / " + HumanFormat.bytes(done + $0) } ?? HumanFormat.bytes(done)
        let speed = meter.bytesPerSecond
        let eta = remaining.map { remaining -> String in
            "ETA " + HumanFormat.clock(remaining == 0 ? 0 : speed > 0 ? Double(remaining) / speed : nil)
        }
        let pieces: [String] = [counts, bytes, HumanFormat.speed(speed)] + (eta.map { [$0] } ?? [])
        guard mode == .interactive else { return "Total: " + pieces.joined(separator: separator) }
        let limit = max(1, width - 1)
        for count in stride(from: pieces.count, through: 1, by: -1) {
            let line = "Total  " + pieces.prefix(count).joined(separator: separator)
            if line.count <= limit { return line }
        }
        return HumanFormat.truncate("Total  " + counts, toWidth: limit)
    }

    /// `Total: 5/5 done, 300.0 MiB in 3.2s (93.8 MiB/s)`.
    private func finalLine(at now: Duration) -> String {
        var counts = "\(succeeded)/\(downloadCount) done"
        if failed > 0 { counts += ", \(failed) failed" }
        if queued > 0 { counts += ", \(queued) not started" }
        let seconds = max(0, (now - (firstEvent ?? now)).secondsValue)
        let transferred = endedTransferred + order.reduce(Int64(0)) { sum, id in
            sum + max(0, (entries[id]?.latest.completedBytes ?? 0) - (entries[id]?.resumedFrom ?? 0))
        }
        let speed = seconds > 0 ? Double(transferred) / seconds : 0
        return "Total: \(counts), \(HumanFormat.bytes(completedBytes)) in \(HumanFormat.elapsed(seconds)) (\(HumanFormat.speed(speed)))"
    }
}
