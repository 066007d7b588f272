#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Haul
import Synchronization

/// Runs the downloads of one `haul` invocation and computes its exit status.
///
/// Collects the URLs (arguments, then `-i`), checks them all before any network I/O, builds
/// the ``Downloader`` configuration and the requests from ``CommandOptions``, runs the downloads
/// one after another, reports their events through a ``Reporter``, and cancels the running one
/// on Ctrl-C.
struct Runner {
    /// The parsed options.
    let options: CommandOptions
    /// Where text goes and where the process facts come from.
    let terminal: any Terminal

    /// Runs everything and returns the exit status (CONTRACT.md).
    func run() async -> Int32 {
        var texts = options.urls
        if let list = options.inputFile {
            do throws(DownloadError) {
                texts += InputURLs.urls(inList: try InputURLs.readList(list, terminal: terminal))
            } catch {
                terminal.write("haul: \(HumanFormat.printable(error.message))\n", to: .error)
                return error.code.exitStatus
            }
            if texts.isEmpty {
                terminal.write("haul: no URLs in '\(HumanFormat.printable(list))'\n", to: .error)
                return ExitStatus.failure
            }
        }
        if options.output != nil && texts.count > 1 {
            HaulCommand.printUsageError(UsageError("--output can only be used with a single URL"), to: terminal)
            return ExitStatus.usage
        }

        var urls: [URL] = []
        for text in texts {
            do throws(DownloadError) {
                urls.append(try InputURLs.validate(text))
            } catch {
                terminal.write("haul: \(HumanFormat.printable(URLRedaction.redact(text))): \(error.message)\n", to: .error)
            }
        }
        guard urls.count == texts.count else { return ExitStatus.usage }

        if options.insecure && !options.quiet && !options.json {
            terminal.write("haul: warning: TLS certificates are not verified (--insecure)\n", to: .error)
        }
        return await download(urls, displayURLs: texts.map { HumanFormat.printable(URLRedaction.redact($0)) })
    }

    /// The downloader's settings from the options.
    var configuration: Downloader.Configuration {
        var configuration = Downloader.Configuration()
        configuration.connectTimeout = options.connectTimeout
        configuration.headerTimeout = options.headerTimeout
        configuration.stallTimeout = options.stallTimeout
        configuration.tls = Downloader.TLSOptions(
            extraCAFile: options.caCertificateFile.map { absolutePath($0, isDirectory: false).path },
            insecure: options.insecure)
        configuration.conflictPolicy = options.conflictPolicy
        configuration.retry = RetryPolicy(maximumRetries: options.retries, initialDelay: options.retryWait)
        return configuration
    }

    /// Where downloads land: `-o` is an exact file; else `-d` or the working directory.
    var destination: Destination {
        if let output = options.output { return .file(absolutePath(output, isDirectory: false)) }
        if let directory = options.directory { return .directory(absolutePath(directory, isDirectory: true)) }
        return .directory(terminal.currentDirectory)
    }

    /// The request for the `index`-th URL of the run.
    ///
    /// The key includes the index, so the same URL listed twice runs twice instead of joining
    /// the (just finished) first run.
    func request(for url: URL, index: Int) -> DownloadRequest {
        DownloadRequest(url: url, headers: options.headers.map { (name: $0.name, value: $0.value) },
                        conflictPolicy: options.conflictPolicy, key: "haul-cli-\(index) \(url.absoluteString)")
    }

    /// `path` made absolute against the terminal's working directory, `.` and `..` resolved.
    private func absolutePath(_ path: String, isDirectory: Bool) -> URL {
        let base = URL(fileURLWithPath: terminal.currentDirectory.path, isDirectory: true)
        return URL(fileURLWithPath: path, isDirectory: isDirectory, relativeTo: base).standardizedFileURL
    }

    private func download(_ urls: [URL], displayURLs: [String]) async -> Int32 {
        let style: Reporter.Style = options.json ? .json : options.quiet ? .quiet : .progress
        let reporter = Reporter(style: style, terminal: terminal)
        let downloader = Downloader(configuration: configuration)
        let destination = self.destination
        let interrupts = InterruptState()
        let watch = terminal.watchInterrupts { interrupts.interrupt() }
        defer { watch.stop() }
        let origin = ContinuousClock.now
        let now = { ContinuousClock.now - origin }

        var statuses: [Int32] = []
        for (index, url) in urls.enumerated() {
            if interrupts.isInterrupted { break }
            reporter.begin(id: String(index + 1), displayURL: displayURLs[index])
            let download = downloader.download(request(for: url, index: index), to: destination)
            interrupts.setRunning(download)
            do throws(DownloadError) {
                for try await event in download.events {
                    switch event {
                    case .started(let start): reporter.started(start, at: now())
                    case .progress(let progress): reporter.progress(progress, at: now())
                    case .retrying(let attempt, let delay, let error):
                        reporter.retrying(attempt: attempt, delay: delay, error: error)
                    case .paused, .resumed, .skipped, .finished, .startingOver: break
                    }
                }
                reporter.finished(try await download.result(), at: now())
                statuses.append(ExitStatus.success)
            } catch {
                let interrupted = interrupts.isInterrupted && error.code == .cancelled
                reporter.failed(error, interrupted: interrupted)
                statuses.append(error.code.exitStatus)
            }
            interrupts.setRunning(nil)
        }
        return interrupts.isInterrupted ? ExitStatus.interrupted : ExitStatus.combined(statuses)
    }
}

/// Ctrl-C bookkeeping shared with the signal handler's thread.
private final class InterruptState: Sendable {
    private struct State {
        var interrupted = false
        var running: Download?
    }
    private let state = Mutex(State())

    /// Whether Ctrl-C was pressed.
    var isInterrupted: Bool { state.withLock { $0.interrupted } }

    /// Records Ctrl-C and cancels the running download.
    func interrupt() {
        let running = state.withLock { state in
            state.interrupted = true
            return state.running
        }
        running?.cancel()
    }

    /// Sets the download Ctrl-C cancels; cancels it at once when Ctrl-C came first.
    func setRunning(_ download: Download?) {
        let cancelNow = state.withLock { state in
            state.running = download
            return state.interrupted
        }
        if cancelNow { download?.cancel() }
    }
}
