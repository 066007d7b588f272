import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A private PostgreSQL server for the tests: its own data folder in a temporary folder, a Unix
/// socket there and no TCP port, trusted logins as `haul`, run as the `postgres` user when the
/// tests run as root. It ends with the test process (a watcher stops it when the process is
/// gone) or when ``stop()`` is called.
///
/// `HAUL_TEST_POSTGRES=FOLDER:PORT` (as `.ci/run` sets) makes ``shared`` the cluster already
/// running there instead of a new one.
public final class PostgresCluster: Sendable {
    /// The folder of the socket.
    public let socketFolder: String
    public let port: Int
    private let binaries: String
    private let dataFolder: String?

    /// The cluster the tests share, started at first use; `nil` where PostgreSQL is not installed.
    public static let shared: PostgresCluster? = {
        if let given = ProcessInfo.processInfo.environment["HAUL_TEST_POSTGRES"], let colon = given.lastIndex(of: ":"),
           let port = Int(given[given.index(after: colon)...]), let binaries = findBinaries() {
            return PostgresCluster(socketFolder: String(given[..<colon]), port: port, binaries: binaries, dataFolder: nil)
        }
        return try? start()
    }()

    /// Whether the tests can have a PostgreSQL server here.
    public static var isAvailable: Bool { shared != nil }

    private init(socketFolder: String, port: Int, binaries: String, dataFolder: String?) {
        (self.socketFolder, self.port, self.binaries, self.dataFolder) = (socketFolder, port, binaries, dataFolder)
    }

    /// Makes and starts a new cluster of the caller's own (to stop and start in a test).
    public static func start() throws -> PostgresCluster {
        guard let binaries = findBinaries() else { throw Failure("PostgreSQL is not installed (no initdb)") }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("haul-pg-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        if getuid() == 0, let user = getpwnam("postgres") { chown(folder, user.pointee.pw_uid, user.pointee.pw_gid) }
        let cluster = PostgresCluster(socketFolder: folder, port: 5432, binaries: binaries, dataFolder: folder + "/data")
        try cluster.run("\(binaries)/initdb -D \(folder)/data -A trust -U haul -E UTF8 --no-sync")
        try cluster.startServer()
        return cluster
    }

    /// The libpq URL of a new, empty database.
    public func makeDatabase() throws -> String {
        let name = "haul_test_\(UUID().uuidString.prefix(12).lowercased().replacingOccurrences(of: "-", with: ""))"
        try run("\(binaries)/psql -q -h \(socketFolder) -p \(port) -U haul -d postgres -c 'CREATE DATABASE \(name)'")
        return url(database: name)
    }

    /// The libpq URL of `database` on this cluster.
    public func url(database: String) -> String {
        "postgresql://haul@/\(database)?host=\(socketFolder)&port=\(port)"
    }

    /// Stops the server (a fast shutdown: sessions are ended, commits kept) and waits for its end.
    public func stop() throws {
        guard let dataFolder else { throw Failure("the shared cluster of HAUL_TEST_POSTGRES is not the tests' to stop") }
        try run("\(binaries)/pg_ctl -D \(dataFolder) -m fast -w stop")
    }

    /// Stops the server and removes its folder.
    public func destroy() {
        guard let dataFolder else { return }
        try? run("\(binaries)/pg_ctl -D \(dataFolder) -m immediate -w stop")
        try? run("rm -rf \(socketFolder)")
    }

    /// Starts the server again after ``stop()``.
    public func startServer() throws {
        guard let dataFolder else { return }
        let parent = getpid()
        // The watcher ends the server when the test process is gone, so no server outlives the tests.
        let server = "\(binaries)/postgres -D \(dataFolder) -k \(socketFolder) -p \(port) -c listen_addresses= -c max_connections=300"
        try run("(\(server) > \(socketFolder)/log 2>&1 & pg=$!; "
                + "while [ -d /proc/\(parent) ] && kill -0 $pg 2>/dev/null; do sleep 1; done; kill -INT $pg 2>/dev/null; "
                + "[ -d /proc/\(parent) ] || rm -rf \(socketFolder)) "
                + "> /dev/null 2>&1 < /dev/null &")
        for _ in 0..<200 {
            if (try? run("\(binaries)/pg_isready -q -h \(socketFolder) -p \(port)")) != nil { return }
            usleep(50_000)
        }
        throw Failure("the test PostgreSQL server did not start: see \(socketFolder)/log")
    }

    /// Runs a shell command to its end, as the `postgres` user when the tests run as root. Spawned
    /// and reaped here (`posix_spawn`, `waitpid`): this runs inside a static initializer, where
    /// Foundation's `Process` can wait forever for a child already gone.
    private func run(_ command: String) throws {
        let quoted = command.replacingOccurrences(of: "'", with: "'\\''")
        let arguments = getuid() == 0 ? ["/bin/sh", "-c", "exec runuser -u postgres -- sh -c '\(quoted)' > /dev/null 2>&1 < /dev/null"]
            : ["/bin/sh", "-c", command + " > /dev/null 2>&1 < /dev/null"]
        var pid: pid_t = 0
        let argv = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        guard posix_spawn(&pid, "/bin/sh", nil, nil, argv, environ) == 0 else { throw Failure("cannot start /bin/sh") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        if status != 0 { throw Failure("\(command.prefix(60)) ended with status \(status)") }
    }

    /// The folder of `initdb`, `postgres`, `pg_ctl`, `pg_isready` and `psql`: Debian's newest.
    private static func findBinaries() -> String? {
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []
        for version in versions.sorted(by: { (Int($0) ?? 0) > (Int($1) ?? 0) })
        where FileManager.default.isExecutableFile(atPath: "/usr/lib/postgresql/\(version)/bin/initdb") {
            return "/usr/lib/postgresql/\(version)/bin"
        }
        return nil
    }

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
        public init(_ description: String) { self.description = description }
    }
}
