import Haul
import HaulCore
import HaulService
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The daemon's hooks (`--on-complete`, `--on-error`): a program run for each download that
/// completes or fails here, given by the daemon's command line or config file only (no RPC call
/// sets one).
///
/// Hooks for one download run one at a time, in order; at most ``Configuration/concurrentHooks``
/// run at once and ``Configuration/waitingLimit`` wait (more are dropped, and the log says so).
/// Each has a time limit; what it prints goes to the log a line at a time (the first
/// ``Configuration/outputLimit`` bytes); how it ended is logged; nothing a hook does stops the daemon.
public final class DownloadHooks: Sendable {
    /// What to run, and the bounds.
    public struct Configuration: Sendable {
        /// The program run when a download completes (an absolute path), if any.
        public var onComplete: String?
        /// The program run when a download fails (an absolute path), if any.
        public var onError: String?
        /// How long a hook may run before it is stopped.
        public var timeLimit: Duration = .seconds(60)
        /// Bytes of a hook's output logged; the rest is read and dropped.
        public var outputLimit = 64 * 1024
        /// Hooks running at once, at most.
        public var concurrentHooks = 4
        /// Hooks waiting for a slot, at most (more are dropped, and logged).
        public var waitingLimit = 1_000
        /// Where the hooks' lines go (the daemon's log).
        public var log: @Sendable (String) -> Void = { _ in }

        /// No hooks.
        public init() {}

        var isEmpty: Bool { onComplete == nil && onError == nil }
    }

    private struct State {
        var waiting: [HookCommand] = []
        /// The downloads whose hook runs, and its process group once started.
        var running: [DownloadID: pid_t] = [:]
        var stopping = false
    }

    let configuration: Configuration
    private let state = ConditionLock(State())
    private let threads: ThreadPool
    private let inherited: [String]

    /// Hooks as configured; the daemon's environment is read now.
    public init(configuration: Configuration) {
        self.configuration = configuration
        threads = ThreadPool(maximumThreads: max(1, configuration.concurrentHooks))
        var inherited: [String] = []
        var entry = environ
        while let line = entry.pointee {
            inherited.append(String(cString: line))
            entry += 1
        }
        self.inherited = inherited
    }

    /// Runs the hook for `download`, which just ended (complete or error), when one is configured.
    public func downloadEnded(_ download: ServiceDownload) {
        let kind: HookCommand.Kind = download.status == .complete ? .complete : .error
        guard download.status == .complete || download.status == .error,
              let program = kind == .complete ? configuration.onComplete : configuration.onError else { return }
        let command = HookCommand(kind, program: program, download: download, inherited: inherited)
        let refusal: String? = state.withLock { state in
            if state.stopping { return "the daemon stops" }
            guard state.waiting.count < configuration.waitingLimit else { return "\(configuration.waitingLimit) hooks are waiting" }
            state.waiting.append(command)
            return nil
        }
        if let refusal { return configuration.log("\(kind.rawValue) for \(download.id.hex) not run: \(refusal)") }
        startNext()
    }

    /// Starts the waiting hooks that may run now: a free slot, and no hook of theirs running.
    private func startNext() {
        let ready: [HookCommand] = state.withLock { state in
            var ready: [HookCommand] = []
            while state.running.count < configuration.concurrentHooks,
                  let index = state.waiting.firstIndex(where: { state.running[$0.id] == nil }) {
                let command = state.waiting.remove(at: index)
                state.running[command.id] = 0
                ready.append(command)
            }
            return ready
        }
        for command in ready {
            do throws(ResourceError) {
                try threads.run(name: "haul-hook") { [self] in run(command) }
            } catch {
                configuration.log("\(command.kind.rawValue) for \(command.id.hex) not run: \(error)")
                finished(command)
            }
        }
    }

    private func run(_ command: HookCommand) {
        let id = command.id
        guard !state.withLock({ $0.stopping }) else {
            configuration.log("\(command.kind.rawValue) for \(id.hex) not run: the daemon stops")
            return finished(command)
        }
        var process = HookProcess(command: command, timeLimit: configuration.timeLimit, outputLimit: configuration.outputLimit,
                                  started: { [state] pid in state.withLock { $0.running[id] = pid } })
        process.reaped = { [state] in state.withLock { $0.running[id] = 0 } }
        do throws(HookProcess.StartFailure) {
            report(command, try process.run())
        } catch {
            configuration.log("\(command.kind.rawValue) for \(id.hex): \(error.message)")
        }
        finished(command)
    }

    private func finished(_ command: HookCommand) {
        state.withLockBroadcasting { $0.running[command.id] = nil }
        startNext()
    }

    /// Logs a run's output, a line at a time, then how it ended.
    private func report(_ command: HookCommand, _ outcome: HookProcess.Outcome) {
        let name = "\(command.kind.rawValue) for \(command.id.hex)"
        for line in outcome.output.split(separator: UInt8(ascii: "\n")) { configuration.log("\(name): \(Self.printable(line))") }
        if outcome.droppedBytes > 0 { configuration.log("\(name): \(outcome.droppedBytes) more bytes of output not logged") }
        let time = Self.seconds(outcome.duration)
        if outcome.timedOut {
            configuration.log("\(name): stopped after its time limit of \(configuration.timeLimit) (\(time))")
        } else if let signal = outcome.signal {
            configuration.log("\(name): ended by signal \(signal) after \(time)")
        } else if outcome.status != 0 {
            configuration.log("\(name): failed with exit status \(outcome.status ?? -1) after \(time)")
        } else {
            configuration.log("\(name): done in \(time)")
        }
    }

    /// A duration as seconds with two decimals (`0.25 s`).
    static func seconds(_ duration: Duration) -> String {
        let hundredths = duration.components.seconds * 100 + duration.components.attoseconds / 10_000_000_000_000_000
        let fraction = hundredths % 100
        return "\(hundredths / 100).\(fraction < 10 ? "0" : "")\(fraction) s"
    }

    /// A line of output as log text: control characters shown as U+FFFD, invalid UTF-8 repaired.
    static func printable(_ bytes: ArraySlice<UInt8>) -> String {
        var text = ""
        for scalar in String(decoding: bytes, as: UTF8.self).unicodeScalars {
            let control = scalar.value < 0x20 && scalar != "\t" || (0x7F...0x9F).contains(scalar.value)
            text.unicodeScalars.append(control ? "\u{FFFD}" : scalar)
        }
        return text
    }

    /// Stops taking hooks, drops those waiting, gives the running ones up to `grace` to end, then
    /// kills their process groups.
    public func stop(grace: Duration = .seconds(10)) {
        let dropped = state.withLock { state in
            state.stopping = true
            defer { state.waiting = [] }
            return state.waiting.count
        }
        if dropped > 0 { configuration.log("\(dropped) hooks not run: the daemon stops") }
        guard !state.wait(until: .now + grace, while: { !$0.running.isEmpty }) else { return }
        // Until every run ended: one that started while this looked is killed on the next round.
        let end = ContinuousClock.now + .seconds(5)
        repeat {
            for pid in state.withLock({ Array($0.running.values) }) where pid > 0 { kill(-pid, SIGKILL) }
        } while !state.wait(until: .now + .milliseconds(100), while: { !$0.running.isEmpty }) && ContinuousClock.now < end
    }
}
