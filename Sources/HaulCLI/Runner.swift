#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Haul
import HaulCore

/// Runs the downloads of one `haul` invocation and computes its exit status.
///
/// Collects the URLs (arguments, then `-i`), checks them all before any network I/O, builds
/// the ``Downloader`` configuration and the requests from ``CommandOptions``, starts every
/// download at once through one downloader (which runs `-j` of them and queues the rest), reports
/// their interleaved events through one ``Reporter``, and cancels them all on Ctrl-C.
struct Runner {
    /// The parsed options.
    let options: CommandOptions
    /// Where text goes and where the process facts come from.
    let terminal: any Terminal
    /// The transport (`--engine`: the caller resolves `urlsession`, see ``URLSessionEngine``).
    var transport: Downloader.Transport = .native
    /// Where the downloader and its downloads go when the run ends, if the process is about to exit.
    var held: HeldUntilExit?

    /// Runs everything and returns the exit status (``ExitStatus``; README.md, "Exit status").
    func run() async -> Int32 {
        var entries: [[String]] = []
        var planned: [MetalinkInput.Planned?] = []
        if let failure = collect(into: &entries, planned: &planned) { return failure }
        for (flag, given) in [("--output", options.output != nil), ("--mirror", !options.mirrors.isEmpty)] where given && entries.count > 1 {
            HaulCommand.printUsageError(UsageError("\(flag) can only be used with a single URL"), to: terminal)
            return ExitStatus.usage
        }
        if !options.mirrors.isEmpty, !entries.isEmpty { entries[0] += options.mirrors }
        guard let sources = check(entries) else { return ExitStatus.usage }
        let texts = entries.map { $0[0] }
        if planned.contains(where: { $0 != nil }) {
            // The root of the documents' names: their folders are made below it without following links.
            do {
                try FileManager.default.createDirectory(at: metalinkRoot, withIntermediateDirectories: true)
            } catch {
                terminal.write("haul: cannot create '\(HumanFormat.printable(metalinkRoot.path))'\n", to: .error)
                return ExitStatus.localFile
            }
        }

        if options.insecure && !options.quiet && !options.json {
            terminal.write("haul: warning: TLS certificates are not verified (--insecure)\n", to: .error)
        }
        switch prepareReach() {
        case .success(let reach):
            return await downloadWithDescriptions(sources, planned: planned, texts: texts, reach: reach)
        case .failure(let exit): return exit.status
        }
    }

    /// Each download's URLs (its own, then its mirrors: tab-separated in a list), from the
    /// operands, the files of Metalink documents among them and the `-i` list, with the file a
    /// Metalink document names for it; or the exit status after printing why they cannot be read.
    private func collect(into entries: inout [[String]], planned: inout [MetalinkInput.Planned?]) -> Int32? {
        do throws(DownloadError) {
            for operand in options.urls {
                guard MetalinkInput.isDocument(operand) else {
                    entries.append([operand])
                    planned.append(nil)
                    continue
                }
                let document = try MetalinkInput.files(at: operand, in: URL(fileURLWithPath: terminal.currentDirectory.path))
                if !options.quiet { for warning in document.warnings { terminal.write("haul: warning: \(HumanFormat.printable(warning))\n", to: .error) } }
                entries += document.files.map(\.urls)
                planned += document.files.map { $0 }
            }
            if let list = options.inputFile {
                let lines = InputURLs.urls(inList: try InputURLs.readList(list, terminal: terminal))
                if entries.isEmpty, lines.isEmpty {
                    terminal.write("haul: no URLs in '\(HumanFormat.printable(list))'\n", to: .error)
                    return ExitStatus.failure
                }
                entries += lines.map(InputURLs.sources(onLine:))
                planned += lines.map { _ in nil }
            }
        } catch {
            terminal.write("haul: \(HumanFormat.printable(error.message))\n", to: .error)
            return error.code.exitStatus
        }
        return nil
    }

    /// Each download's URLs (its own, then its mirrors) checked, or `nil` after printing why one is bad.
    func check(_ entries: [[String]]) -> [[CheckedURL]]? {
        let texts = entries.flatMap { $0 }
        var checked: [CheckedURL] = []
        for (text, check) in zip(texts, InputURLs.checkAll(texts)) {
            do throws(DownloadError) {
                let url = try check.get()
                _ = try StorageURL.signer(for: url.url, endpoint: options.endpoint, environment: terminal.environment)
                checked.append(url)
            } catch {
                terminal.write("haul: \(HumanFormat.printable(URLRedaction.redact(text))): \(error.message)\n", to: .error)
            }
        }
        guard checked.count == texts.count else { return nil }
        var rest = checked[...]
        return entries.map { entry in
            defer { rest = rest.dropFirst(entry.count) }
            return Array(rest.prefix(entry.count))
        }
    }

    /// The downloader's settings from the options.
    var configuration: Downloader.Configuration {
        var configuration = Downloader.Configuration()
        configuration.connectTimeout = options.connectTimeout
        configuration.headerTimeout = options.headerTimeout
        configuration.stallTimeout = options.stallTimeout
        configuration.tls = Downloader.TLSOptions(
            extraCAFile: options.caCertificateFile.map {
                absolutePath($0, isDirectory: false, in: URL(fileURLWithPath: terminal.currentDirectory.path)).path
            },
            insecure: options.insecure)
        configuration.conflictPolicy = options.conflictPolicy
        configuration.retry = RetryPolicy(maximumRetries: options.retries, initialDelay: options.retryWait,
                                          retriesRefusedConnections: options.retriesRefusedConnections)
        configuration.connectionsPerDownload = options.connections
        configuration.maximumSources = options.maxSources
        configuration.maximumActiveDownloads = options.maxDownloads
        configuration.rateLimit = options.rateLimit
        configuration.transport = transport
        configuration.proxy = proxyOptions
        return configuration
    }

    /// Where downloads land: `-o` is an exact file (a relative one inside `-d`, an absolute one
    /// anywhere); else `-d` or the working directory.
    var destination: Destination {
        let workingDirectory = URL(fileURLWithPath: terminal.currentDirectory.path, isDirectory: true)
        let folder = options.directory.map { absolutePath($0, isDirectory: true, in: workingDirectory) }
        if let output = options.output {
            return .file(absolutePath(output, isDirectory: false, in: folder ?? workingDirectory))
        }
        return .directory(folder ?? terminal.currentDirectory)
    }

    /// Where a file a Metalink document describes lands: its name (a relative path, its folders
    /// created below `-d` without following links) inside `-d` or the working directory.
    func destination(named planned: MetalinkInput.Planned) -> Destination {
        // By bytes: a `/` followed by a combining mark is one Character and still a separator.
        let parts = planned.name.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
            .map { String(decoding: $0, as: UTF8.self) }
        return .contained(root: metalinkRoot, folder: parts.dropLast().joined(separator: "/"), name: parts.last)
    }

    /// `-d`, or the working directory.
    private var metalinkRoot: URL {
        let workingDirectory = URL(fileURLWithPath: terminal.currentDirectory.path, isDirectory: true)
        return options.directory.map { absolutePath($0, isDirectory: true, in: workingDirectory) } ?? workingDirectory
    }

    /// The request for the `index`-th URL of the run.
    ///
    /// The key includes the index, so the same URL listed twice runs twice instead of joining
    /// the (just finished) first run.
    func request(for checked: CheckedURL, mirrors: [CheckedURL] = [], index: Int) -> DownloadRequest {
        let url = checked.url
        var request = DownloadRequest(url: url, headers: options.headers.map { (name: $0.name, value: $0.value) },
                                      conflictPolicy: options.conflictPolicy, key: "haul-cli-\(index) \(url.absoluteString)")
        request.startOver = !options.continuesPartial
        request.checksum = options.checksum
        request.signer = try? StorageURL.signer(for: url, endpoint: options.endpoint, environment: terminal.environment)
        request.setURL(checked)
        request.credentials = options.credentials
        // -H and -u are for the URL given; netrc and cookies still apply to each server.
        request.mirrors = mirrors.map { mirror in
            DownloadSource(url: mirror.url,
                           signer: try? StorageURL.signer(for: mirror.url, endpoint: options.endpoint, environment: terminal.environment))
        }
        return request
    }

    /// `path` made absolute against `base` (an absolute `path` stays as it is), `.` and `..` resolved.
    private func absolutePath(_ path: String, isDirectory: Bool, in base: URL) -> URL {
        let folder = URL(fileURLWithPath: base.path, isDirectory: true)
        return URL(fileURLWithPath: path, isDirectory: isDirectory, relativeTo: folder).standardizedFileURL
    }

    /// What the downloads' callbacks tell the one task that writes the terminal.
    private enum Report: Sendable {
        case event(Int, DownloadEvent)
        /// The result, with the `started` event when it was held back (`-q`); `last` for the
        /// download that ended last, after which nothing more comes.
        case ended(Int, Result<DownloadResult, DownloadError>, started: DownloadStart?, last: Bool)
        /// The download gave way to the Metalink document its server names (`--metalink=follow`).
        case described(Int, by: URL, last: Bool)
        case tick
    }

    /// Which round of a run: the URLs given, the Metalink documents their servers named, or the
    /// files documents describe.
    enum Round {
        /// The URLs given: a download that brings a Metalink document is one, and with
        /// `--metalink=follow` one whose server names a document gives way to it.
        case given
        /// The documents the servers named: each download is one.
        case documents
        /// The files of documents: nothing more is followed.
        case files
    }

    /// What a round leaves for the next: its exit status, the documents it brought (their paths,
    /// in the order of the downloads) and the documents its servers named.
    struct RoundOutcome {
        var status: Int32
        var documents: [String] = []
        var described: [URL] = []
    }

    /// Starts every download through one ``Downloader`` (which runs `-j` of them at once and
    /// queues the rest), follows their events concurrently, and reports them from this task only.
    func download(_ urls: [[CheckedURL]], planned: [MetalinkInput.Planned?], texts: [String], reach: Reach,
                  round: Round = .given) async -> RoundOutcome {
        let style: Reporter.Style = options.json ? .json : options.quiet ? .quiet : .progress
        let reporter = Reporter(style: style, terminal: terminal, urlsAsGiven: texts)
        reporter.retriesRefusedConnections = options.retriesRefusedConnections
        var configuration = self.configuration
        configuration.netrc = reach.netrc
        configuration.cookies = reach.cookies
        let downloader = Downloader(configuration: configuration)
        let interrupts = InterruptState()
        let watch = terminal.watchInterrupts { interrupts.interrupt() }
        defer { watch.stop() }
        let origin = ContinuousClock.now

        let (reports, sink) = AsyncStream<Report>.makeStream()
        let follows = FollowState(round: round, metalink: options.followsMetalink, planned: planned, urls: urls.map { $0[0].url })
        let tokens = start(urls, planned: planned, on: downloader, reportingTo: sink, quiet: style == .quiet, follows: follows)
        follows.track(tokens)
        interrupts.track(tokens)
        reporter.sourcesOf = { tokens[$0].sourcesInUse }
        let statuses = await follow(reports, of: urls.count, sink: sink, reporter: reporter, interrupts: interrupts,
                                    origin: origin)
        sink.finish()
        reporter.end(at: ContinuousClock.now - origin)
        if let held {
            held.hold(downloader)
            held.hold(tokens)
        }
        return RoundOutcome(status: interrupts.isInterrupted ? ExitStatus.interrupted : ExitStatus.combined(statuses),
                            documents: follows.documents, described: follows.described)
    }

    /// Starts a download of each of `urls` on `downloader`, each reporting on its own thread
    /// straight into `sink`.
    ///
    /// No task per download: with 1,000 downloads, a task following each cost a task and several
    /// wake-ups each. -q (`quiet`) shows failures only. Of the events it needs `started` alone,
    /// which tells an interrupted download from one that never started, and gets it with the
    /// result; a success it does not need at all, so only failures and the last download to end
    /// report (with 1,000 small files, a report per download woke the reporting task 1,000 times).
    ///
    /// `follows` hears each start and success, and may turn a cancellation into a `described` report.
    ///
    /// - Returns: the downloads' tokens, in the order of `urls`.
    private func start(_ urls: [[CheckedURL]], planned: [MetalinkInput.Planned?], on downloader: Downloader, reportingTo sink: AsyncStream<Report>.Continuation,
                       quiet: Bool, follows: FollowState) -> [DownloadToken] {
        let destination = self.destination
        let unfinished = SharedStateLock(urls.count)
        return urls.enumerated().map { index, sources in
            let start = SharedStateLock<DownloadStart?>(nil)
            var request = request(for: sources[0], mirrors: Array(sources.dropFirst()), index: index)
            request.checksum = planned[index]?.checksum ?? request.checksum
            request.pieces = planned[index]?.pieces
            return downloader.start(request, to: planned[index].map(self.destination(named:)) ?? destination, onEvent: { event in
                if case .started(let started) = event { follows.started(index, started) }
                if !quiet {
                    sink.yield(.event(index, event))
                } else if case .started(let started) = event {
                    start.withLock { $0 = started }
                }
            }, completion: { result in
                if case .success(let done) = result { follows.finished(index, done) }
                let started = start.withLock { $0 }
                let document = follows.gaveWay(index, result)
                unfinished.withLock { count in   // yields in order: the `last` report is the last one
                    count -= 1
                    if let document {
                        sink.yield(.described(index, by: document, last: count == 0))
                        return
                    }
                    if case .success = result, quiet, count > 0 { return }
                    sink.yield(.ended(index, result, started: started, last: count == 0))
                }
            })
        }
    }

    /// Hands `reports` to `reporter` until the last of `count` downloads has ended, with a tick
    /// into `sink` every 500 ms meanwhile when the reporter wants them.
    ///
    /// - Returns: each download's exit status (0 for success), in the order of the downloads.
    private func follow(_ reports: AsyncStream<Report>, of count: Int, sink: AsyncStream<Report>.Continuation,
                        reporter: Reporter, interrupts: InterruptState, origin: ContinuousClock.Instant) async -> [Int32] {
        var statuses = [Int32](repeating: ExitStatus.success, count: count)
        await withTaskGroup(of: Void.self) { group in
            if reporter.wantsTicks {
                group.addTask {
                    while !Task.isCancelled {
                        try? await Task.sleep(for: .milliseconds(500))
                        sink.yield(.tick)
                    }
                }
            }
            for await report in reports {
                let last = show(report, on: reporter, interrupts: interrupts, statuses: &statuses, at: ContinuousClock.now - origin)
                if last { break }
            }
            group.cancelAll()
        }
        return statuses
    }

    /// Shows one report on `reporter` and records a failure's exit status in `statuses`.
    ///
    /// - Returns: whether it was the end of the download that ended last (nothing comes after).
    private func show(_ report: Report, on reporter: Reporter, interrupts: InterruptState, statuses: inout [Int32],
                      at now: Duration) -> Bool {
        switch report {
        case .event(let index, .started(let start)): reporter.started(index, start, at: now)
        case .event(let index, .progress(let progress)): reporter.progress(index, progress, at: now)
        case .event(let index, .retrying(let attempt, let delay, let error)):
            reporter.retrying(index, attempt: attempt, delay: delay, error: error, at: now)
        case .event(let index, .startingOver(let reason)): reporter.startingOver(index, reason: reason, at: now)
        case .event(let index, .warning(let message)): reporter.warning(index, message, at: now)
        case .event(_, .paused), .event(_, .resumed), .event(_, .skipped), .event(_, .finished): break
        case .ended(let index, let result, let start, let last):
            if let start { reporter.started(index, start, at: now) }
            switch result {
            case .success(let done):
                reporter.finished(index, done, at: now)
            case .failure(let error):
                let interrupted = interrupts.isInterrupted && error.code == .cancelled
                reporter.failed(index, error, interrupted: interrupted, at: now)
                statuses[index] = error.code.exitStatus
            }
            return last
        case .described(let index, let document, let last):
            reporter.described(index, by: document, at: now)
            return last
        case .tick: reporter.tick(at: now)
        }
        return false
    }
}

/// Ctrl-C bookkeeping shared with the signal handler's thread.
private final class InterruptState: Sendable {
    private struct State {
        var interrupted = false
        var downloads: [DownloadToken] = []
    }
    private let state = SharedStateLock(State())

    /// Whether Ctrl-C was pressed.
    var isInterrupted: Bool { state.withLock { $0.interrupted } }

    /// Records Ctrl-C and cancels every download of the run, running or queued.
    func interrupt() {
        let downloads = state.withLock { state in
            state.interrupted = true
            return state.downloads
        }
        for download in downloads { download.cancel() }
    }

    /// Sets the downloads Ctrl-C cancels; cancels them at once when Ctrl-C came first.
    func track(_ downloads: [DownloadToken]) {
        let cancelNow = state.withLock { state in
            state.downloads = downloads
            return state.interrupted
        }
        if cancelNow { for download in downloads { download.cancel() } }
    }
}
