import Haul
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The `haul` command.
///
/// ``main()`` is what the executable calls; ``run(arguments:terminal:)`` is the same command
/// with its output captured, for tests and embedding.
public enum HaulCommand {
    /// Runs the command with the process arguments and exits with its status.
    ///
    /// - Parameters:
    ///   - urlSession: the URLSession transport when this program links it (`haul-urlsession`);
    ///     `nil` for `haul`, which runs that program for `--engine=urlsession`.
    ///   - demo: the server `haul demo` downloads from, when this program links one (`haul`).
    public static func main(urlSession: Downloader.Transport? = nil, demo: DemoOrigin.Starter? = nil) async -> Never {
        signal(SIGPIPE, SIG_IGN)   // a closed socket or pipe is an error to report, not a reason to die
        let held = HeldUntilExit()
        let status = await run(arguments: Array(CommandLine.arguments.dropFirst()), terminal: SystemTerminal(),
                               urlSession: urlSession.map { .linked($0) } ?? .companion, demo: demo, holding: held)
        // `held` lives while the closure runs, and the closure never returns.
        withExtendedLifetime(held) { exit(status) }
    }

    /// Runs the command.
    ///
    /// - Parameters:
    ///   - arguments: the arguments without the program name.
    ///   - terminal: where output goes and where stdin, the working directory and Ctrl-C come from.
    ///   - urlSession: where `--engine=urlsession` comes from (``URLSessionEngine``).
    ///   - demo: the server `haul demo` downloads from (``DemoOrigin``); without one it fails.
    /// - Returns: the exit status (``ExitStatus``): 0 success, 2 usage error, the lowest failure status...
    public static func run(arguments: [String], terminal: some Terminal,
                           urlSession: URLSessionEngine = .unavailable, demo: DemoOrigin.Starter? = nil) async -> Int32 {
        await run(arguments: arguments, terminal: terminal, urlSession: urlSession, demo: demo, holding: nil)
    }

    /// ``run(arguments:terminal:urlSession:demo:)``, leaving the downloads' objects in `held`, if any,
    /// instead of releasing them (``HeldUntilExit``).
    static func run(arguments: [String], terminal: some Terminal, urlSession: URLSessionEngine,
                    demo: DemoOrigin.Starter?, holding held: HeldUntilExit?) async -> Int32 {
        let command: ParsedCommand
        do throws(UsageError) {
            command = try ArgumentParser.parse(arguments) { path throws(UsageError) in
                try DaemonConfigFile.load(path, environment: terminal.environment)
            }
        } catch {
            printUsageError(error, to: terminal)
            return ExitStatus.usage
        }
        switch command {
        case .help:
            terminal.write(HelpText.download, to: .output)
            return ExitStatus.success
        case .demoHelp:
            terminal.write(HelpText.demo, to: .output)
            return ExitStatus.success
        case .version:
            terminal.write(HelpText.version, to: .output)
            return ExitStatus.success
        case .demo(let options):
            return await Demo(options: options, terminal: terminal, origin: demo).run()
        case .daemonHelp:
            terminal.write(HelpText.daemon, to: .output)
            return ExitStatus.success
        case .clientHelp:
            terminal.write(HelpText.client, to: .output)
            return ExitStatus.success
        case .daemon(let options):
            return await DaemonCommand(options: options, terminal: terminal).run()
        case .client(let options):
            return ClientCommand(options: options, terminal: terminal).run()
        case .download(let options):
            var transport = Downloader.Transport.native
            if options.engine == .urlSession {
                switch urlSession.transport(arguments: arguments, terminal: terminal) {
                case .success(let linked): transport = linked
                case .failure(let exit): return exit.status
                }
            }
            return await Runner(options: options, terminal: terminal, transport: transport, held: held).run()
        }
    }

    /// Prints `haul: <message>` and the `--help` hint to standard error.
    static func printUsageError(_ error: UsageError, to terminal: some Terminal) {
        terminal.write("haul: \(HumanFormat.printable(error.message))\nTry 'haul --help' for more information.\n", to: .error)
    }
}
