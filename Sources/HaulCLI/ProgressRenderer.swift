import Haul

/// Turns one download's progress into terminal text; pure: no clock, no output of its own.
///
/// The caller passes every event with the time it happened (an offset from any origin) and
/// writes the returned text to standard error.
///
/// - Interactive (a TTY): one line redrawn in place with `\r\u{1B}[2K` — name, percent, bar,
///   bytes, speed, ETA — at most ``redrawInterval`` apart, never wider than ``width``; the final
///   state is always drawn, then a newline.
/// - Plain (not a TTY, or `TERM=dumb`): a line every ``plainInterval`` and a final line; no escape codes.
///
/// Without a known total there is no percent, bar or ETA: a spinner `[/]` (interactive) or bytes only.
struct ProgressRenderer {
    /// How the text is laid out.
    enum Mode: Sendable {
        /// Redraw one line in place.
        case interactive
        /// Append plain lines.
        case plain
    }

    /// Clears the current line and returns to its start.
    static let clearLine = "\r\u{1B}[2K"
    static let spinner: [Character] = ["|", "/", "-", "\\"]

    let mode: Mode
    /// The terminal width; lines are kept one column narrower so the cursor never wraps.
    var width: Int
    /// The shortest time between two interactive redraws.
    let redrawInterval: Duration
    /// The time between two plain progress lines.
    let plainInterval: Duration

    private var name = ""
    private var startTime: Duration = .zero
    private var resumedFrom: Int64 = 0
    private var throttle: Throttle
    private var latest: DownloadProgress?
    private var lineOpen = false
    private var spinnerIndex = 0
    /// Each server's speed while several send the file (`nil`: set aside), shown after the
    /// timing when the line has room and on plain lines.
    var serverSpeeds: [Double?] = []

    /// Creates a renderer.
    ///
    /// - Parameters:
    ///   - mode: interactive or plain.
    ///   - width: the terminal width in columns.
    ///   - redrawInterval: the shortest time between interactive redraws (~10 per second).
    ///   - plainInterval: the time between plain progress lines.
    init(mode: Mode, width: Int, redrawInterval: Duration = .milliseconds(100), plainInterval: Duration = .seconds(5)) {
        self.mode = mode
        self.width = width
        self.redrawInterval = redrawInterval
        self.plainInterval = plainInterval
        self.throttle = Throttle(interval: mode == .interactive ? redrawInterval : plainInterval)
    }

    /// A download started: remembers its name and draws its first state.
    ///
    /// - Parameters:
    ///   - name: the file's name (control characters are shown as `?`).
    ///   - totalBytes: its length, when known.
    ///   - resumedFrom: bytes already on disk.
    ///   - now: the time of the event.
    mutating func start(name: String, totalBytes: Int64?, resumedFrom: Int64, servers: Int = 1, at now: Duration) -> String {
        self.name = HumanFormat.printable(name)
        self.startTime = now
        self.resumedFrom = resumedFrom
        self.latest = DownloadProgress(completedBytes: resumedFrom, totalBytes: totalBytes,
                                       bytesPerSecond: 0, estimatedTimeRemaining: nil)
        throttle.reset()
        throttle.record(now)
        switch mode {
        case .interactive:
            return redraw(latest!, tail: .eta)
        case .plain:
            return Self.startedLine(name: self.name, totalBytes: totalBytes, resumedFrom: resumedFrom, servers: servers) + "\n"
        }
    }

    /// New progress: returns the redraw, or `""` when throttled.
    mutating func update(_ progress: DownloadProgress, at now: Duration) -> String {
        latest = progress
        guard throttle.permits(at: now) else { return "" }
        switch mode {
        case .interactive:
            spinnerIndex += 1
            return redraw(progress, tail: .eta)
        case .plain:
            return plainLine(progress) + "\n"
        }
    }

    /// The download succeeded with `byteCount` bytes: draws the final state and ends the line.
    mutating func finish(byteCount: Int64, at now: Duration) -> String {
        let seconds = max(0, (now - startTime).secondsValue)
        let transferred = max(0, byteCount - resumedFrom)
        let speed = seconds > 0 ? Double(transferred) / seconds : 0
        let final = DownloadProgress(completedBytes: byteCount, totalBytes: byteCount, bytesPerSecond: speed,
                                     estimatedTimeRemaining: 0)
        latest = final
        switch mode {
        case .interactive:
            let text = redraw(final, tail: .elapsed(seconds)) + "\n"
            lineOpen = false
            return text
        case .plain:
            return Self.doneLine(name: name, byteCount: byteCount, transferred: transferred, seconds: seconds) + "\n"
        }
    }

    /// The download stopped early (failure or Ctrl-C): draws the last state and ends the line.
    mutating func end() -> String {
        guard mode == .interactive, lineOpen, let latest else { return "" }
        let text = redraw(latest, tail: .eta) + "\n"
        lineOpen = false
        return text
    }

    /// Prints a whole line (a warning, a retry notice) without garbling the progress line:
    /// clears it, prints `line`, and makes the next update redraw at once.
    mutating func message(_ line: String) -> String {
        guard mode == .interactive, lineOpen else { return line + "\n" }
        lineOpen = false
        throttle.reset()
        return Self.clearLine + line + "\n"
    }

    // MARK: - Layout

    /// `name: started (10.0 MiB, resuming at 1.0 MiB, from 3 servers)`, without a newline.
    static func startedLine(name: String, totalBytes: Int64?, resumedFrom: Int64, servers: Int = 1) -> String {
        let size = totalBytes.map(HumanFormat.bytes) ?? "size unknown"
        let resumed = resumedFrom > 0 ? ", resuming at \(HumanFormat.bytes(resumedFrom))" : ""
        let from = servers > 1 ? ", from \(servers) servers" : ""
        return "\(name): started (\(size)\(resumed)\(from))"
    }

    /// `name: done, 10.0 MiB in 9.0s (1.0 MiB/s)`, without a newline; the speed is the bytes
    /// transferred (resumed bytes excluded) over the time taken.
    static func doneLine(name: String, byteCount: Int64, transferred: Int64? = nil, seconds: Double) -> String {
        let speed = seconds > 0 ? Double(max(0, transferred ?? byteCount)) / seconds : 0
        return "\(name): done, \(HumanFormat.bytes(byteCount)) in \(HumanFormat.elapsed(seconds)) (\(HumanFormat.speed(speed)))"
    }

    /// What follows the speed on an interactive line.
    enum Tail {
        /// The estimated time left, `ETA 0:03`.
        case eta
        /// The time the whole download took, `in 2.0s`.
        case elapsed(Double)
    }

    private mutating func redraw(_ progress: DownloadProgress, tail: Tail) -> String {
        lineOpen = true
        return Self.clearLine + Self.line(name: name, parts: Self.parts(progress, tail: tail, spinner: spinnerIndex, servers: serverSpeeds),
                                          width: width)
    }

    /// The parts of an interactive line besides the name, from the richest arrangement to the barest.
    struct LineParts {
        /// The percent (`  45%`) or, without a known total, a spinner (`[/]`).
        let lead: String
        /// The fraction done, when the total is known.
        let fraction: Double?
        /// Per arrangement: whether it has a bar, and the text after the lead or bar.
        let arrangements: [(bar: Bool, rest: String)]

        /// Columns arrangement `index` takes besides the name, with the narrowest bar:
        /// `" " + lead`, `" " + bar`, `" " + rest`.
        func fixedWidth(_ index: Int) -> Int {
            let arrangement = arrangements[index]
            let bar = arrangement.bar && fraction != nil ? 1 + ProgressRenderer.minimumBarWidth : 0
            return 1 + lead.count + bar + (arrangement.rest.isEmpty ? 0 : 1 + arrangement.rest.count)
        }
    }

    /// The narrowest bar drawn; with less room the bar is left out.
    static let minimumBarWidth = 12
    /// The widest bar drawn.
    static let maximumBarWidth = 52

    /// The parts of `progress`'s interactive line: lead, bytes, speed and ETA (or elapsed time),
    /// and each server's speed (`servers`, when there are several) where the line has room.
    static func parts(_ progress: DownloadProgress, tail: Tail, spinner: Int, servers: [Double?] = []) -> LineParts {
        let fraction = progress.fractionCompleted
        let percent = fraction.map { fraction -> String in
            let text = "\(Int((fraction * 100).rounded(.down)))%"
            return String(repeating: " ", count: max(0, 4 - text.count)) + text
        }
        let bytes = progress.totalBytes.map { HumanFormat.bytes(progress.completedBytes) + " / " + HumanFormat.bytes($0) }
            ?? HumanFormat.bytes(progress.completedBytes)
        let speed = HumanFormat.speed(progress.bytesPerSecond)
        let timing: String? = switch tail {
        case .eta: fraction == nil ? nil : "ETA " + HumanFormat.clock(progress.estimatedTimeRemaining)
        case .elapsed(let seconds): "in " + HumanFormat.elapsed(seconds)
        }
        let perServer = servers.count > 1 ? serversText(servers) : nil
        let arrangements: [(bar: Bool, pieces: [String?])] = (perServer == nil ? [] : [(true, [bytes, speed, timing, perServer])]) + [
            (true, [bytes, speed, timing]),
            (false, [bytes, speed, timing]),
            (false, [bytes, speed]),
            (false, [bytes]),
            (false, []),
        ]
        return LineParts(lead: percent ?? "[\(Self.spinner[spinner % Self.spinner.count])]", fraction: fraction,
                         arrangements: arrangements.map { ($0.bar, $0.pieces.compactMap { $0 }.joined(separator: "  ")) })
    }

    /// One download's interactive line, at most `width - 1` columns:
    /// `name  45% [=====>     ] 12.0 MiB / 27.0 MiB  4.5 MiB/s  ETA 0:03`.
    static func line(name: String, progress: DownloadProgress, tail: Tail, spinner: Int, width: Int) -> String {
        line(name: name, parts: parts(progress, tail: tail, spinner: spinner), width: width)
    }

    /// An interactive line from its parts, at most `width - 1` columns: the richest arrangement
    /// that fits wins.
    ///
    /// - Parameters:
    ///   - name: the file name, already printable.
    ///   - parts: the rest of the line.
    ///   - width: the terminal width.
    ///   - nameWidth: a fixed name column (cut or padded to it), so the lines of a block align;
    ///     by default the name's own width (at least 8 columns of it, at most 40).
    ///   - barWidth: the bar's width when it is drawn; by default all the room left, up to 52.
    ///   - richest: the first arrangement tried (a block uses the same one for all its lines).
    static func line(name: String, parts: LineParts, width: Int, nameWidth fixedNameWidth: Int? = nil,
                     barWidth fixedBarWidth: Int? = nil, richest: Int = 0) -> String {
        let limit = max(1, width - 1)
        let ownWidth = HumanFormat.displayWidth(name)
        let minimumName = fixedNameWidth ?? min(ownWidth, 8)
        for (index, arrangement) in parts.arrangements.enumerated() where index >= richest {
            let fixed = parts.fixedWidth(index)
            guard minimumName + fixed <= limit else { continue }
            let nameWidth = fixedNameWidth ?? min(ownWidth, max(minimumName, min(40, limit - fixed)))
            var line = HumanFormat.truncate(name, toWidth: nameWidth).padding(toWidth: nameWidth) + " " + parts.lead
            if arrangement.bar, let fraction = parts.fraction {
                let room = limit - nameWidth - fixed + minimumBarWidth
                line += " " + Self.bar(fraction, width: min(fixedBarWidth ?? maximumBarWidth, room))
            }
            return arrangement.rest.isEmpty ? line : line + " " + arrangement.rest
        }
        return HumanFormat.truncate(name + " " + parts.lead, toWidth: limit)
    }

    /// `[=====>     ]`, `width` columns including the brackets.
    static func bar(_ fraction: Double, width: Int) -> String {
        let inner = max(0, width - 2)
        let filled = min(inner, Int((fraction * Double(inner)).rounded(.down)))
        if filled == inner { return "[" + String(repeating: "=", count: inner) + "]" }
        let head = filled > 0 || fraction > 0 ? ">" : " "
        return "[" + String(repeating: "=", count: filled) + head + String(repeating: " ", count: inner - filled - 1) + "]"
    }

    /// Each server's speed: `servers 2.1 MB/s, 1.9 MB/s, set aside`.
    static func serversText(_ servers: [Double?]) -> String {
        "servers " + servers.map { $0.map(HumanFormat.speed) ?? "set aside" }.joined(separator: ", ")
    }

    private func plainLine(_ progress: DownloadProgress) -> String {
        let line = plainLineAlone(progress)
        return serverSpeeds.count > 1 ? line + "; " + Self.serversText(serverSpeeds) : line
    }

    private func plainLineAlone(_ progress: DownloadProgress) -> String {
        let speed = HumanFormat.speed(progress.bytesPerSecond)
        guard let total = progress.totalBytes, let fraction = progress.fractionCompleted else {
            return "\(name): \(HumanFormat.bytes(progress.completedBytes)), \(speed)"
        }
        return "\(name): \(Int((fraction * 100).rounded(.down)))% of \(HumanFormat.bytes(total))"
            + " (\(HumanFormat.bytes(progress.completedBytes))), \(speed), ETA \(HumanFormat.clock(progress.estimatedTimeRemaining))"
    }
}

extension Duration {
    /// The duration in seconds, as a `Double`.
    var secondsValue: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}

extension String {
    /// The string followed by spaces up to `width` display columns.
    func padding(toWidth width: Int) -> String {
        let current = HumanFormat.displayWidth(self)
        return current >= width ? self : self + String(repeating: " ", count: width - current)
    }
}
