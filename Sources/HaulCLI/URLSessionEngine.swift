import Haul
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where `--engine=urlsession` comes from.
///
/// The URLSession transport lives in the `HaulURLSession` module, apart, so that the `haul`
/// program does not load Foundation's networking (on Linux FoundationNetworking, libcurl and their
/// libraries, which roughly double its memory and start-up time). `haul` runs the
/// companion program `haul-urlsession` (built beside it: the same command linked with that
/// module) for the rare run that asks for it.
public enum URLSessionEngine: Sendable {
    /// This program has the transport.
    case linked(Downloader.Transport)
    /// This program is `haul`: a run that asks for it becomes the companion program beside it.
    case companion
    /// Not available (a `haul` command run inside another program): a usage error.
    case unavailable

    /// The companion program's name.
    static let companionName = "haul-urlsession"
    /// Set in the environment of the companion program by `haul`.
    static let marker = "HAUL_URLSESSION_COMPANION"

    /// The transport for `--engine=urlsession`, or the exit status of a run that could not have it.
    /// `.companion` replaces the process with the companion program (same arguments) and returns
    /// only when that failed.
    func transport(arguments: [String], terminal: some Terminal) -> Result<Downloader.Transport, ExitCode> {
        switch self {
        case .linked(let transport):
            return .success(transport)
        case .unavailable:
            terminal.write("haul: --engine=urlsession is not available here (it needs the \(Self.companionName) program)\n",
                           to: .error)
            return .failure(ExitCode(ExitStatus.usage))
        case .companion:
            guard let program = Self.executablePath(), let slash = program.lastIndex(of: "/") else {
                terminal.write("haul: --engine=urlsession: cannot tell where this program is, to run \(Self.companionName)\n",
                               to: .error)
                return .failure(ExitCode(ExitStatus.usage))
            }
            let path = String(program[..<slash]) + "/" + Self.companionName
            // A companion that is haul again (a copy or a link) would run itself forever: the
            // marker tells the second run that it was meant to be the companion.
            if getenv(Self.marker) != nil {
                terminal.write("haul: --engine=urlsession: \(HumanFormat.printable(path)) is not the URLSession program\n",
                               to: .error)
                return .failure(ExitCode(ExitStatus.usage))
            }
            setenv(Self.marker, "1", 1)
            let argv = ([path] + arguments).map { strdup($0) } + [nil]
            execv(path, argv)
            // A program just written may still be open for writing in a child another thread forked.
            for _ in 0..<10 where errno == ETXTBSY {
                usleep(50_000)
                execv(path, argv)
            }
            unsetenv(Self.marker)
            let code = errno
            for pointer in argv { free(pointer) }
            let missing = code == ENOENT ? "; build it with: \(Self.buildCommand(forProgramIn: String(program[..<slash])))" : ""
            terminal.write("haul: --engine=urlsession needs \(HumanFormat.printable(path)): \(String(cString: strerror(code)))"
                           + "\(missing)\n", to: .error)
            return .failure(ExitCode(ExitStatus.usage))
        }
    }

    /// The command that builds the companion program into `folder`, the folder of this `haul`:
    /// the release or debug build of the package, or `Scripts/build-release.sh` for its
    /// installable build; in a folder of its own, the command of a release build.
    static func buildCommand(forProgramIn folder: String) -> String {
        if folder.contains("/.build/static/") { return "Scripts/build-release.sh" }
        if folder.hasSuffix("/debug") { return "swift build --product \(companionName)" }
        return "swift build -c release --product \(companionName)"
    }

    /// The running executable's path (symlinks resolved).
    private static func executablePath() -> String? {
        #if os(Linux)
        guard let resolved = realpath("/proc/self/exe", nil) else { return nil }
        #else
        var size: UInt32 = 0
        _ = _NSGetExecutablePath(nil, &size)
        var raw = [CChar](repeating: 0, count: Int(size) + 1)
        guard _NSGetExecutablePath(&raw, &size) == 0, let resolved = realpath(raw, nil) else { return nil }
        #endif
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// An exit status, as a failure.
    struct ExitCode: Error {
        let status: Int32
        init(_ status: Int32) { self.status = status }
    }
}
