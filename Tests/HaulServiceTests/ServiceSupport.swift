import Foundation
import Synchronization
import Haul
import HaulServer
import HaulService
import HaulTestSupport
import Testing

/// A service configuration for tests: root and state in `dir` (or in a database of its own on
/// the tests' PostgreSQL server), short timeouts, no retries.
func serviceConfiguration(_ dir: URL, active: Int = 2, connections: Int = 2, store: TestStore = .sqlite) -> DownloadService.Configuration {
    var engine = Downloader.Configuration()
    engine.connectTimeout = .seconds(5)
    engine.headerTimeout = .seconds(5)
    engine.stallTimeout = .seconds(5)
    engine.retry = RetryPolicy(maximumRetries: 0)
    engine.connectionsPerDownload = connections
    engine.maximumActiveDownloads = active
    return DownloadService.Configuration(root: dir.appendingPathComponent("downloads"), state: store.location(dir), downloader: engine)
}

/// The stores a service's tests run against.
enum TestStore: String, Sendable, CustomTestStringConvertible {
    case sqlite
    case postgreSQL

    /// SQLite, and PostgreSQL where it is installed.
    static var available: [TestStore] { PostgresCluster.isAvailable ? [.sqlite, .postgreSQL] : [.sqlite] }

    var testDescription: String { rawValue }

    /// The state of a test whose folder is `dir`: a file in it, or the database made for it (the
    /// same one each time it is asked for, so a second service finds the first one's list).
    func location(_ dir: URL) -> DownloadService.StateLocation {
        switch self {
        case .sqlite: return .file(dir.appendingPathComponent("state.db"))
        case .postgreSQL:
            let url = Self.databases.withLock { made in
                if let url = made[dir.path] { return url }
                let url = (try? PostgresCluster.shared?.makeDatabase()) ?? "postgresql://haul@/unavailable"
                made[dir.path] = url
                return url
            }
            return .postgreSQL(try! PostgresSettings(url))
        }
    }

    private static let databases = Mutex<[String: String]>([:])
}

/// The bytes a resource serves.
func bytes(of resource: HaulServer.Resource) -> [UInt8] {
    resource.bytes(0..<resource.size)
}
