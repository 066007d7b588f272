#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Haul

/// What the command shows about one download, in one of three styles: a progress display,
/// `--json` events, or nothing but errors (`-q`).
///
/// The runner calls it from one task, in event order, with the time of each event; it is the
/// only writer of the terminal while downloads run. Every failure prints exactly one line to
/// standard error, `haul: <url>: <message>`, whatever the style.
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

    private let style: Style
    private let terminal: any Terminal
    private var renderer: ProgressRenderer
    private var jsonThrottle = Throttle(interval: .milliseconds(100))
    private var unsentProgress: JSONEvent?

    private var id = ""
    private var displayURL = ""
    private var fileURL: URL?

    /// Creates a reporter writing to `terminal`.
    init(style: Style, terminal: any Terminal) {
        self.style = style
        self.terminal = terminal
        self.renderer = ProgressRenderer(mode: terminal.isInteractive ? .interactive : .plain, width: terminal.width)
    }

    /// A new download begins (before any of its events).
    ///
    /// - Parameters:
    ///   - id: its number in this run, `"1"`, `"2"`...
    ///   - displayURL: the URL as given, secrets redacted.
    func begin(id: String, displayURL: String) {
        self.id = id
        self.displayURL = displayURL
        self.fileURL = nil
        self.unsentProgress = nil
        jsonThrottle.reset()
    }

    /// The download's ``DownloadEvent/started(_:)``.
    func started(_ start: DownloadStart, at now: Duration) {
        fileURL = start.fileURL
        switch style {
        case .progress:
            renderer.width = terminal.width
            terminal.write(renderer.start(name: start.fileURL.lastPathComponent, totalBytes: start.totalBytes,
                                          resumedFrom: start.resumedFrom, at: now), to: .error)
        case .json:
            emit(.started(id: id, url: displayURL, file: start.fileURL.path, total: start.totalBytes,
                          resumedFrom: start.resumedFrom, connections: start.connections))
        case .quiet:
            break
        }
    }

    /// The download's ``DownloadEvent/progress(_:)``.
    func progress(_ progress: DownloadProgress, at now: Duration) {
        switch style {
        case .progress:
            renderer.width = terminal.width
            terminal.write(renderer.update(progress, at: now), to: .error)
        case .json:
            let event = JSONEvent.progress(id: id, bytes: progress.completedBytes, total: progress.totalBytes,
                                           speed: progress.bytesPerSecond, eta: progress.estimatedTimeRemaining)
            if jsonThrottle.permits(at: now) {
                emit(event)
                unsentProgress = nil
            } else {
                unsentProgress = event
            }
        case .quiet:
            break
        }
    }

    /// The download's ``DownloadEvent/retrying(attempt:delay:error:)``.
    func retrying(attempt: Int, delay: Double, error: DownloadError) {
        switch style {
        case .progress:
            let line = "haul: \(displayURL): \(HumanFormat.printable(error.message)); retrying in \(HumanFormat.elapsed(delay)) (attempt \(attempt))"
            terminal.write(renderer.message(line), to: .error)
        case .json:
            emit(.retrying(id: id, attempt: attempt, delay: delay, error: error))
        case .quiet:
            break
        }
    }

    /// The download succeeded (or was skipped because the file exists).
    func finished(_ result: DownloadResult, at now: Duration) {
        switch style {
        case .progress:
            if result.skipped {
                terminal.write(renderer.message("\(result.fileURL.lastPathComponent): exists, skipped"), to: .error)
            } else {
                if fileURL == nil {
                    _ = renderer.start(name: result.fileURL.lastPathComponent, totalBytes: result.byteCount,
                                       resumedFrom: 0, at: now)
                }
                terminal.write(renderer.finish(byteCount: result.byteCount, at: now), to: .error)
            }
        case .json:
            if let unsentProgress { emit(unsentProgress) }
            emit(.finished(id: id, file: result.fileURL.path, bytes: result.byteCount, sha256: nil, skipped: result.skipped))
        case .quiet:
            break
        }
    }

    /// The download failed (or was interrupted): one line on standard error, plus the JSON event.
    ///
    /// - Parameters:
    ///   - error: what went wrong.
    ///   - interrupted: the failure is the user's Ctrl-C.
    func failed(_ error: DownloadError, interrupted: Bool) {
        let message = interrupted ? "interrupted; the partial file is kept" : error.message
        switch style {
        case .progress:
            terminal.write(renderer.end(), to: .error)
        case .json:
            if let unsentProgress { emit(unsentProgress) }
            emit(.failed(id: id, exitCode: error.code.exitStatus, error: error, partial: partialPath()))
        case .quiet:
            break
        }
        terminal.write("haul: \(displayURL): \(HumanFormat.printable(message))\n", to: .error)
    }

    /// The partial file of the current download, when one is on disk.
    private func partialPath() -> String? {
        guard let fileURL else { return nil }
        let partial = fileURL.path + ".part"
        return FileManager.default.fileExists(atPath: partial) ? partial : nil
    }

    private func emit(_ event: JSONEvent) {
        terminal.write(event.line, to: .output)
    }
}
