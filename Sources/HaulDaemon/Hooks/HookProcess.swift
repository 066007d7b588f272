import HaulCore
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One run of a hook's program: started without a shell in a process group of its own, standard
/// input from `/dev/null`, standard output and error into one pipe read here; stopped (SIGTERM
/// to its group, SIGKILL two seconds later) when it outlives its time limit.
struct HookProcess {
    /// How a run ended.
    struct Outcome: Sendable, Equatable {
        /// The exit status, or `nil` when a signal ended it.
        var status: Int32?
        /// The signal that ended it.
        var signal: Int32?
        /// Whether it was stopped for running past its time limit.
        var timedOut: Bool
        /// The first bytes of its output.
        var output: [UInt8]
        /// Bytes of output past ``output`` (read and dropped).
        var droppedBytes: Int
        var duration: Duration
    }

    /// Why a program did not start.
    struct StartFailure: Error, Equatable {
        var message: String
    }

    private static let spawning = Mutex(())

    let command: HookCommand
    let timeLimit: Duration
    let outputLimit: Int
    /// Called with the process group once it runs (for a daemon that stops to end it).
    var started: @Sendable (pid_t) -> Void = { _ in }
    /// Called once the program ended and was reaped (its number may be reused from then on).
    var reaped: @Sendable () -> Void = {}

    /// Runs the program to its end (or its time limit); blocks the calling thread.
    func run() throws(StartFailure) -> Outcome {
        let begin = ContinuousClock.now
        // One spawn at a time: a pipe made while another hook starts must not reach its program
        // (its end would hold that pipe open past the program's exit).
        let (reader, spawned) = Self.spawning.withLock { _ -> (Int32, Result<pid_t, StartFailure>) in
            var ends: [Int32] = [-1, -1]
            guard pipe(&ends) == 0 else { return (-1, .failure(StartFailure(message: "no pipe: \(errnoText())"))) }
            for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
            defer { close(ends[1]) }
            return (ends[0], spawn(output: ends[1]))
        }
        defer { if reader >= 0 { close(reader) } }
        let pid = try spawned.get()
        started(pid)
        var outcome = supervise(pid, output: reader)
        outcome.duration = ContinuousClock.now - begin
        return outcome
    }

    /// Starts the program with its output into `output`.
    private func spawn(output: Int32) -> Result<pid_t, StartFailure> {
        var actions = posix_spawn_file_actions_t()
        var attributes = posix_spawnattr_t()
        posix_spawn_file_actions_init(&actions)
        posix_spawnattr_init(&attributes)
        defer {
            posix_spawn_file_actions_destroy(&actions)
            posix_spawnattr_destroy(&attributes)
        }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, output, 1)
        posix_spawn_file_actions_adddup2(&actions, output, 2)
        spawnClosesDescriptors(from: 3, &actions)   // not a client's socket another thread just accepted
        var all = sigset_t(), none = sigset_t()
        sigfillset(&all)
        sigemptyset(&none)
        posix_spawnattr_setsigdefault(&attributes, &all)   // SIGPIPE ignored here is not the program's
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))
        let argv = command.arguments.map { strdup($0) } + [nil]
        let envp = command.environment.map { strdup($0) } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var pid: pid_t = 0
        var failed = posix_spawn(&pid, command.arguments[0], &actions, &attributes, argv, envp)
        // A program just written may still be open for writing in a child another thread forked.
        for _ in 0..<10 where failed == ETXTBSY {
            usleep(50_000)
            failed = posix_spawn(&pid, command.arguments[0], &actions, &attributes, argv, envp)
        }
        guard failed == 0 else { return .failure(StartFailure(message: "cannot run \(command.arguments[0]): \(errnoText(failed))")) }
        return .success(pid)
    }

    /// Reads the output and waits for the end, stopping the group past the time limit.
    private func supervise(_ pid: pid_t, output: Int32) -> Outcome {
        var outcome = Outcome(status: nil, signal: nil, timedOut: false, output: [], droppedBytes: 0, duration: .zero)
        let deadline = ContinuousClock.now + timeLimit
        var exited: ContinuousClock.Instant?, open = true, signalled: Int32 = 0
        var buffer = [UInt8](repeating: 0, count: 16_384)
        while open || exited == nil {
            if open { open = drain(output, into: &outcome, buffer: &buffer) } else { usleep(20_000) }
            if exited == nil, let status = reap(pid) {
                (outcome.status, outcome.signal) = status
                exited = .now
                reaped()
            }
            // A child of the program may hold the pipe after the program ended: a second more.
            if let exited, ContinuousClock.now - exited > .seconds(1) { break }
            if exited == nil && ContinuousClock.now >= deadline {
                outcome.timedOut = true
                signalled = stop(pid, after: deadline, sent: signalled)
            }
        }
        return outcome
    }

    /// Reads what the pipe holds (waiting up to 50 ms); `false` at its end.
    private func drain(_ fd: Int32, into outcome: inout Outcome, buffer: inout [UInt8]) -> Bool {
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&poller, 1, 50) > 0 else { return true }
        let count = read(fd, &buffer, buffer.count)
        if count < 0 { return errno == EINTR || errno == EAGAIN }
        if count == 0 { return false }
        let kept = max(0, min(count, outputLimit - outcome.output.count))
        outcome.output += buffer[..<kept]
        outcome.droppedBytes += count - kept
        return true
    }

    /// The exit status or the signal, once the program ended.
    private func reap(_ pid: pid_t) -> (Int32?, Int32?)? {
        var status: Int32 = 0
        guard waitpid(pid, &status, WNOHANG) == pid else { return nil }
        let signal = status & 0x7F
        return signal == 0 ? ((status >> 8) & 0xFF, nil) : (nil, signal)
    }

    /// Past the deadline: SIGTERM to the group, SIGKILL two seconds later, each once.
    ///
    /// - Returns: the last signal sent (`sent` when none now).
    private func stop(_ pid: pid_t, after deadline: ContinuousClock.Instant, sent: Int32) -> Int32 {
        let next = ContinuousClock.now - deadline >= .seconds(2) ? SIGKILL : SIGTERM
        guard next != sent else { return sent }
        kill(-pid, next)
        return next
    }
}
