#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Haul

/// What the command shows about the downloads of a run, in one of three styles: a progress
/// display, `--json` events, or nothing but errors (`-q`).
///
/// Downloads are numbered by their position in the run (0-based here, `"1"`-based as JSON ids).
/// The runner calls it from one task, with the events of all downloads interleaved in the order
/// they arrive and the time of each; it is the only writer of the terminal while downloads run,
/// and every piece of text it writes is whole (a JSON line, a redraw). Every failure prints
/// exactly one line to standard error, `haul: <url>: <message>`, whatever the style.
///
/// With one download the progress display is ``ProgressRenderer``'s single line; with several,
/// ``MultiProgressRenderer``'s block.
final class Reporter {
    /// The display style.
    enum Style {
        /// Progress on standard error (redrawn on a TTY, plain lines otherwise).
        case progress
        /// JSON events on standard output.
        case json
        /// Only failure lines.
        case quiet
    }

    private enum Display {
        case single(ProgressRenderer)
        case multiple(MultiProgressRenderer)
        case none
    }

    private struct Item {
        /// The URL as shown, or, until it is first shown, as given (`urlIsShown` false).
        var url: String
        var urlIsShown: Bool
        var fileURL: URL?
        var started = false
        var jsonThrottle = Throttle(interval: .milliseconds(100))
        var unsentProgress: JSONEvent?
    }

    private let style: Style
    /// `--retry-connrefused`: a refused connection's failure then needs no hint.
    var retriesRefusedConnections = false
    /// The servers of download `index`'s running transfer, for `--json` progress.
    var sourcesOf: @Sendable (Int) -> [SourceInUse] = { _ in [] }
    private let terminal: any Terminal
    private var display: Display
    private var items: [Item]
    /// Downloads interrupted before they started, reported together at the end.
    private var notStarted: [Int] = []

    /// Creates a reporter for a run of downloads writing to `terminal`.
    ///
    /// - Parameters:
    ///   - style: progress, JSON or quiet.
    ///   - terminal: where text goes.
    ///   - displayURLs: the URLs of the run as shown (secrets redacted, printable), in order.
    convenience init(style: Style, terminal: any Terminal, displayURLs: [String]) {
        self.init(style: style, terminal: terminal, urls: displayURLs, shown: true)
    }

    /// Creates a reporter for the URLs as given; each is redacted and made printable when it is
    /// first shown (with 1,000 URLs, doing it for all before the first download started took
    /// a few milliseconds, for lines that mostly never appear).
    convenience init(style: Style, terminal: any Terminal, urlsAsGiven: [String]) {
        self.init(style: style, terminal: terminal, urls: urlsAsGiven, shown: false)
    }

    private init(style: Style, terminal: any Terminal, urls displayURLs: [String], shown: Bool) {
        self.style = style
        self.terminal = terminal
        self.items = displayURLs.map { Item(url: $0, urlIsShown: shown) }
        let mode: ProgressRenderer.Mode = terminal.isInteractive ? .interactive : .plain
        switch style {
        case .progress where displayURLs.count == 1:
            display = .single(ProgressRenderer(mode: mode, width: terminal.width))
        case .progress:
            display = .multiple(MultiProgressRenderer(mode: mode, width: terminal.width, downloadCount: displayURLs.count))
        case .json, .quiet:
            display = .none
        }
    }

    /// Whether the display wants ``tick(at:)`` calls (a block of several downloads).
    var wantsTicks: Bool {
        if case .multiple = display { return true }
        return false
    }

    /// Download `index`'s ``DownloadEvent/started(_:)``.
    func started(_ index: Int, _ start: DownloadStart, at now: Duration) {
        items[index].fileURL = start.fileURL
        items[index].started = true
        switch display {
        case .single(var renderer):
            renderer.width = terminal.width
            write(renderer.start(name: start.fileURL.lastPathComponent, totalBytes: start.totalBytes,
                                 resumedFrom: start.resumedFrom, servers: start.servers, at: now))
            display = .single(renderer)
        case .multiple(var renderer):
            renderer.width = terminal.width
            write(renderer.start(id: index, name: start.fileURL.lastPathComponent, totalBytes: start.totalBytes,
                                 resumedFrom: start.resumedFrom, servers: start.servers, at: now))
            display = .multiple(renderer)
        case .none:
            if style == .json {
                emit(.started(id: id(index), url: displayURL(index), file: start.fileURL.path, total: start.totalBytes,
                              resumedFrom: start.resumedFrom, connections: start.connections, servers: start.servers))
            }
        }
    }

    /// Download `index`'s ``DownloadEvent/progress(_:)``.
    func progress(_ index: Int, _ progress: DownloadProgress, at now: Duration) {
        switch display {
        case .single(var renderer):
            renderer.width = terminal.width
            renderer.serverSpeeds = sourcesOf(index).map { source in
                source.setAsideReason == nil ? source.bytesPerSecond : nil
            }
            write(renderer.update(progress, at: now))
            display = .single(renderer)
        case .multiple(var renderer):
            renderer.width = terminal.width
            write(renderer.update(id: index, progress, at: now))
            display = .multiple(renderer)
        case .none:
            guard style == .json else { return }
            let event = JSONEvent.progress(id: id(index), bytes: progress.completedBytes, total: progress.totalBytes,
                                           speed: progress.bytesPerSecond, eta: progress.estimatedTimeRemaining,
                                           sources: sourcesOf(index))
            if items[index].jsonThrottle.permits(at: now) {
                emit(event)
                items[index].unsentProgress = nil
            } else {
                items[index].unsentProgress = event
            }
        }
    }

    /// Download `index`'s ``DownloadEvent/retrying(attempt:delay:error:)``.
    func retrying(_ index: Int, attempt: Int, delay: Double, error: DownloadError, at now: Duration) {
        let line = "haul: \(displayURL(index)): \(HumanFormat.printable(error.message)); "
            + "retrying in \(HumanFormat.elapsed(delay)) (attempt \(attempt))"
        if !message(line, at: now), style == .json {
            emit(.retrying(id: id(index), attempt: attempt, delay: delay, error: error))
        }
    }

    /// Writes a message line above the progress display; `false` when there is no display
    /// (`--json` or `-q`).
    private func message(_ line: String, at now: Duration) -> Bool {
        switch display {
        case .single(var renderer):
            write(renderer.message(line))
            display = .single(renderer)
        case .multiple(var renderer):
            write(renderer.message(line, at: now))
            display = .multiple(renderer)
        case .none:
            return false
        }
        return true
    }

    /// Download `index` could not use what was on disk and starts over (said once, as a message
    /// line; not a `--json` event, and nothing with `-q`).
    func startingOver(_ index: Int, reason: String, at now: Duration) {
        _ = message("haul: \(displayURL(index)): \(HumanFormat.printable(reason))", at: now)
    }

    /// Download `index` reported a warning: a message line (`haul: <url>: warning: …`), or a
    /// `warning` event with `--json`; nothing with `-q`.
    func warning(_ index: Int, _ text: String, at now: Duration) {
        if !message("haul: \(displayURL(index)): warning: \(HumanFormat.printable(text))", at: now), style == .json {
            emit(.warning(id: id(index), message: text))
        }
    }

    /// Download `index` succeeded (or was skipped because the file exists, or an earlier run had
    /// finished it). With `-q` it shows
    /// nothing, and the runner reports only the last success.
    func finished(_ index: Int, _ result: DownloadResult, at now: Duration) {
        switch display {
        case .single(var renderer):
            let name = result.fileURL.lastPathComponent
            if result.skipped || result.alreadyComplete {
                write(renderer.message("\(HumanFormat.printable(name)): \(result.skipped ? Self.skipped : Self.alreadyComplete)"))
            } else {
                if !items[index].started {
                    _ = renderer.start(name: name, totalBytes: result.byteCount, resumedFrom: 0, at: now)
                }
                write(renderer.finish(byteCount: result.byteCount, at: now))
            }
            display = .single(renderer)
        case .multiple(var renderer):
            renderer.width = terminal.width
            let note = result.skipped ? Self.skipped : result.alreadyComplete ? Self.alreadyComplete : nil
            write(renderer.finish(id: index, name: result.fileURL.lastPathComponent, byteCount: result.byteCount, note: note, at: now))
            display = .multiple(renderer)
        case .none:
            guard style == .json else { return }
            if let unsent = items[index].unsentProgress { emit(unsent) }
            items[index].unsentProgress = nil
            emit(.finished(id: id(index), file: result.fileURL.path, bytes: result.byteCount, sha256: result.sha256,
                           skipped: result.skipped, alreadyComplete: result.alreadyComplete, sources: result.sources))
        }
    }

    /// What a download skipped by `--on-conflict=skip` shows instead of its progress.
    static let skipped = "exists, skipped"
    /// What a download whose file an earlier run finished shows instead of its progress.
    static let alreadyComplete = "complete already (an earlier run finished it), not downloaded again"

    /// Download `index` failed (or was interrupted): one line on standard error, plus the JSON event.
    ///
    /// A download interrupted before it started is reported by ``end(at:)`` together with the
    /// others in the same case (a long queue does not print a line per URL).
    ///
    /// - Parameters:
    ///   - index: the download.
    ///   - error: what went wrong.
    ///   - interrupted: the failure is the user's Ctrl-C.
    ///   - now: the time of the event.
    func failed(_ index: Int, _ error: DownloadError, interrupted: Bool, at now: Duration) {
        if style == .json {
            if let unsent = items[index].unsentProgress { emit(unsent) }
            items[index].unsentProgress = nil
            emit(.failed(id: id(index), exitCode: interrupted ? ExitStatus.interrupted : error.code.exitStatus,
                         error: error, partial: partialPath(index)))
        }
        if interrupted && !items[index].started {
            notStarted.append(index)
            return
        }
        var message = interrupted ? "interrupted; the partial file is kept" : error.message
        if error.code == .connectionRefused, !retriesRefusedConnections { message += "; --retry-connrefused retries it" }
        endLine(index, with: "haul: \(displayURL(index)): \(HumanFormat.printable(message))", quietToo: true, at: now)
    }

    /// Ends download `index`'s progress (its line, or its row of the block) with `line`; with
    /// `-q` only when `quietToo`.
    private func endLine(_ index: Int, with line: String, quietToo: Bool, at now: Duration) {
        switch display {
        case .single(var renderer):
            write(renderer.end() + line + "\n")
            display = .single(renderer)
        case .multiple(var renderer):
            renderer.width = terminal.width
            write(renderer.fail(id: index, line: line, at: now))
            display = .multiple(renderer)
        case .none:
            if quietToo { write(line + "\n") }
        }
    }

    /// Download `index` gave way to the Metalink document its server names (`--metalink=follow`):
    /// its files come next, as downloads of their own.
    func described(_ index: Int, by document: URL, at now: Duration) {
        let shown = URLRedaction.redact(document.absoluteString)
        if style == .json {
            items[index].unsentProgress = nil
            emit(.described(id: id(index), metalink: shown))
            return
        }
        // With -q nothing: the files' failures say enough.
        endLine(index, with: "haul: \(displayURL(index)): described by a Metalink document (\(HumanFormat.printable(shown))); following it",
                quietToo: false, at: now)
    }

    /// Time passed with no event (about twice a second while downloads run).
    func tick(at now: Duration) {
        guard case .multiple(var renderer) = display else { return }
        renderer.width = terminal.width
        write(renderer.tick(at: now))
        display = .multiple(renderer)
    }

    /// Every download has ended: the final total line (several downloads), and one line for the
    /// downloads Ctrl-C stopped before they started.
    func end(at now: Duration) {
        var line: String?
        if notStarted.count == 1, let index = notStarted.first {
            line = "haul: \(displayURL(index)): interrupted before it started"
        } else if notStarted.count > 1 {
            line = "haul: interrupted; \(notStarted.count) downloads had not started"
        }
        switch display {
        case .multiple(var renderer):
            renderer.width = terminal.width
            write((line.map { renderer.message($0, at: now) } ?? "") + renderer.end(at: now))
            display = .multiple(renderer)
        case .single(var renderer):
            write(renderer.end() + (line.map { $0 + "\n" } ?? ""))
            display = .single(renderer)
        case .none:
            write(line.map { $0 + "\n" } ?? "")
        }
    }

    /// The URL of download `index` as shown: secrets redacted, printable.
    private func displayURL(_ index: Int) -> String {
        if !items[index].urlIsShown {
            items[index].url = HumanFormat.printable(URLRedaction.redact(items[index].url))
            items[index].urlIsShown = true
        }
        return items[index].url
    }

    /// The JSON id of download `index`: its 1-based position in the run.
    private func id(_ index: Int) -> String {
        String(index + 1)
    }

    /// The partial file of download `index`, when one is on disk.
    private func partialPath(_ index: Int) -> String? {
        guard let fileURL = items[index].fileURL else { return nil }
        let partial = fileURL.path + ".part"
        return FileManager.default.fileExists(atPath: partial) ? partial : nil
    }

    private func write(_ text: String) {
        if !text.isEmpty { terminal.write(text, to: .error) }
    }

    private func emit(_ event: JSONEvent) {
        terminal.write(event.line, to: .output)
    }
}
