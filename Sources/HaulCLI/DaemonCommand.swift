#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Dispatch
import Haul
import HaulDaemon
import HaulDashboard
import HaulService
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Why `haul daemon` does not start: a usage error (exit 2), or a secret file that group or
/// others may read (exit 1: the contract's rule for `--secret-file`, and the generated file reused).
enum DaemonStartError: Error {
    case usage(UsageError)
    case exposedSecret(String)
    /// The state cannot be used as given (PostgreSQL without libpq).
    case unavailableState(String)
}

/// `haul daemon`: the download service served over aria2's JSON-RPC until SIGTERM, SIGINT or
/// `aria2.shutdown`; then it stops accepting, pauses the transfers with their records synced,
/// closes the state file and exits 0.
struct DaemonCommand {
    let options: DaemonOptions
    let terminal: any Terminal

    /// Runs the daemon until a stop is requested.
    ///
    /// - Returns: 0 after a clean stop, 2 for a usage error, 1 when the daemon cannot start.
    func run() async -> Int32 {
        let output = QueuedOutput(terminal)
        defer { output.flush() }
        let startLog = DaemonLog(terminal: output, json: options.json)
        var configuration: Daemon.Configuration
        do throws(DaemonStartError) {
            configuration = try makeConfiguration(startLog)
        } catch {
            output.flush()
            return report(error)
        }
        // The program, not the library, may change a process-wide limit: idle sockets are cheap
        // for the server's event loop, as long as there are descriptors for them.
        DescriptorLimit.raiseToHardLimit()
        let log = DaemonLog(terminal: output, json: options.json, secret: configuration.secret)
        if let file = options.configFile { log.note("options from \(file) under the command line") }
        configuration.hooks.log = { log.note($0) }
        guard let daemon = start(configuration, log: log, output: output) else { return ExitStatus.failure }
        // Caught before the daemon says it listens: a stop sent the moment it does is not lost.
        let watches: [any InterruptWatch] = [terminal.watchInterrupts { daemon.requestStop() },
                                             SignalWatch(signal: SIGTERM, exitsOnRepeat: true) { daemon.requestStop() }]
        let address = daemon.server.address
        log.note("listening on \(address) (JSON-RPC at http://\(address)/jsonrpc), downloads in \(daemon.service.rootPath), "
                 + "state in \(configuration.service.state.description)" + (daemon.fleet.map { ", fleet node \($0.name)" } ?? ""))
        log.note(dashboardNote(address, secret: configuration.secret, stateFile: secretBase))
        await serveUntilStopRequested(daemon, log: log)
        for watch in watches { watch.stop() }
        return ExitStatus.success
    }

    /// Prints why the daemon's configuration was refused.
    ///
    /// - Returns: the exit status: 2 for a usage error, 1 for an exposed secret file.
    private func report(_ error: DaemonStartError) -> Int32 {
        switch error {
        case .usage(let usage):
            HaulCommand.printUsageError(usage, to: terminal)
            return ExitStatus.usage
        case .exposedSecret(let message), .unavailableState(let message):
            terminal.write("haul: daemon: \(message)\n", to: .error)
            return ExitStatus.failure
        }
    }

    /// Makes the daemon, logs its service's events on `log` and starts serving.
    ///
    /// - Returns: the started daemon, or `nil` (the reason printed) when it cannot start.
    private func start(_ configuration: Daemon.Configuration, log: DaemonLog, output: QueuedOutput) -> Daemon? {
        var configuration = configuration
        configuration.onRateLimit = Self.rateLimitLogger(log, zone: configuration.limitZone)
        let daemon: Daemon
        do throws(DaemonError) {
            daemon = try Daemon(configuration: configuration)
        } catch {
            output.flush()
            terminal.write("haul: daemon: \(error.message)\n", to: .error)
            return nil
        }
        let service = daemon.service
        service.addObserver { event in output.write(later: { log.line(event, service.download(event.id)) }) }
        do throws(DaemonError) {
            try daemon.start()
        } catch {
            daemon.stop()
            output.flush()
            terminal.write("haul: daemon: \(error.message)\n", to: .error)
            return nil
        }
        return daemon
    }

    /// Waits until Ctrl-C, SIGTERM or `aria2.shutdown` asks the daemon to stop, then stops it.
    private func serveUntilStopRequested(_ daemon: Daemon, log: DaemonLog) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async {
                daemon.waitForStopRequest()
                continuation.resume()
            }
        }
        log.note("stopping: pausing the transfers and closing the state file")
        daemon.stop()
        log.note("stopped")
    }

    /// The daemon's configuration from the options; the secret read or made.
    private func makeConfiguration(_ log: DaemonLog) throws(DaemonStartError) -> Daemon.Configuration {
        guard let listen = ListenAddress(parsing: options.listen) else {
            throw .usage(UsageError("invalid value '\(options.listen)' for --listen: expected HOST:PORT with an IP address"))
        }
        let (onComplete, onError) = (try program(options.onComplete, "--on-complete"), try program(options.onError, "--on-error"))
        let state = try stateLocation()
        let secret = try secret(stateFile: secretBase, listen: listen, log)
        var engine = Downloader.Configuration()
        engine.connectionsPerDownload = options.connections
        engine.maximumActiveDownloads = options.maxDownloads
        engine.rateLimit = options.rateLimit
        // Clients poll the RPC about once a second: progress once a second keeps a daemon whose
        // transfers trickle from waking ten times a second.
        engine.progressInterval = .seconds(1)
        let root = URL(fileURLWithPath: absolute(options.directory ?? "."), isDirectory: true)
        var server = DaemonServer.Configuration(listen: listen)
        server.allowedOrigins = options.allowedOrigins
        server.pages = [Dashboard()]
        var configuration = Daemon.Configuration(service: .init(root: root, state: state, downloader: engine),
                                                 server: server, secret: secret)
        configuration.node = options.node
        (configuration.hooks.onComplete, configuration.hooks.onError) = (onComplete, onError)
        configuration.limitSchedule = options.limitSchedule
        return configuration
    }

    /// A hook's program as an absolute path: a name with a `/` from the current folder, one
    /// without from the `PATH`, checked to be an executable file now (it runs later, when no
    /// one reads the error).
    private func program(_ given: String?, _ option: String) throws(DaemonStartError) -> String? {
        guard let given else { return nil }
        let candidates = given.utf8.contains(UInt8(ascii: "/")) ? [absolute(given)]
            : (terminal.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":").map { "\($0)/\(given)" }
        for path in candidates where path.utf8.first == UInt8(ascii: "/") {
            var info = stat()
            if stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG, access(path, X_OK) == 0 { return path }
        }
        throw .usage(UsageError("invalid value '\(given)' for \(option): not an executable file"
                                + (given.utf8.contains(UInt8(ascii: "/")) ? "" : " in PATH")))
    }

    /// The state file (its folder made), or the PostgreSQL database `--state` names.
    private func stateLocation() throws(DaemonStartError) -> DownloadService.StateLocation {
        try makeFolder(URL(fileURLWithPath: secretBase).deletingLastPathComponent().path)
        if let given = options.stateFile, PostgresSettings.isURL(given) {
            do throws(ServiceError) {
                return .postgreSQL(try PostgresSettings(given))
            } catch where error.code == .invalidArgument {
                throw .usage(UsageError("invalid value for --state: \(error.message)"))
            } catch {
                throw .unavailableState(error.message)
            }
        }
        return .file(URL(fileURLWithPath: secretBase))
    }

    /// The state file, or the default one when the state is in PostgreSQL: the generated secret
    /// is made beside it.
    private var secretBase: String {
        let given = options.stateFile.flatMap { PostgresSettings.isURL($0) ? nil : $0 }
        return absolute(given ?? DaemonPaths.defaultStateFile(terminal.environment))
    }

    /// Where the dashboard is and how to sign in. The address carries no `#token=`: the secret
    /// appears in no log line, and the log is often a file or a journal.
    private func dashboardNote(_ address: ListenAddress, secret: String?, stateFile: String) -> String {
        let page = Dashboard.address(host: address.host, port: address.port, secret: nil)
        guard let secret, !secret.isEmpty else { return "dashboard at \(page)" }
        let source = options.secret != nil ? "the secret given with --secret"
            : "the secret in \(absolute(options.secretFile ?? DaemonPaths.secretFile(besides: stateFile)))"
        return "dashboard at \(page) (sign in with \(source))"
    }

    /// The secret: given, read from a file only its owner can read, or made beside the state file.
    private func secret(stateFile: String, listen: ListenAddress, _ log: DaemonLog) throws(DaemonStartError) -> String? {
        do throws(UsageError) {
            if let note = try Self.listenNote(listen, secret: options.secret) { log.note(note) }
        } catch {
            throw .usage(error)
        }
        if let given = options.secret { return given }
        if let file = options.secretFile { return try DaemonPaths.readPrivateSecret(absolute(file)) }
        let path = DaemonPaths.secretFile(besides: stateFile)
        let (secret, created) = try DaemonPaths.secret(generatingAt: path)
        log.note(created ? "made a new secret in \(path) (mode 0600)" : "the secret is in \(path)")
        return secret
    }

    /// The rule for the listen address: no secret (`--secret=`) only on loopback; what the log
    /// says about an address other than loopback, or about authentication turned off.
    ///
    /// - Throws: a usage error for `--secret=` on an address other than loopback.
    static func listenNote(_ listen: ListenAddress, secret: String?) throws(UsageError) -> String? {
        if !listen.isLoopback {
            guard secret != "" else {
                throw UsageError("--listen=\(listen) is not a loopback address: it needs a secret (--secret= turns the check off on loopback only)")
            }
            return "listening on \(listen), which is not a loopback address: every call needs the secret"
        }
        return secret == "" ? "warning: --secret= turns authentication off: any local program can use the daemon" : nil
    }

    private func makeFolder(_ path: String) throws(DaemonStartError) {
        do {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
        } catch {
            throw .usage(UsageError("cannot make the state folder \(path)"))
        }
    }

    private func absolute(_ path: String) -> String {
        path.utf8.first == UInt8(ascii: "/") ? path : terminal.currentDirectory.appendingPathComponent(path).standardizedFileURL.path
    }
}
