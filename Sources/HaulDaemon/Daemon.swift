import Haul
import HaulCore
import HaulService

/// A download service served over aria2's JSON-RPC: the ``DownloadService``, the
/// ``Aria2RPC`` over it and the ``DaemonServer`` in front, started and stopped together.
///
/// `haul daemon` is this plus signal handling and logging. ``requestStop()`` (from a signal
/// handler, or `aria2.shutdown`) wakes ``waitForStopRequest()``; ``stop()`` then stops
/// accepting, closes the connections, pauses the transfers with their records synced and
/// closes the state file.
public final class Daemon: Sendable {
    /// Everything a daemon needs.
    public struct Configuration: Sendable {
        /// The service: the download root, the state file, the engine's settings.
        public var service: DownloadService.Configuration
        /// The server: the listen address, allowed origins, limits.
        public var server: DaemonServer.Configuration
        /// The secret calls carry as `token:SECRET`; `nil` (or empty) turns the check off.
        public var secret: String?
        /// With the state in PostgreSQL, this daemon's name in the fleet that shares it
        /// (default: the host's name and the process's number).
        public var node: String?
        /// With the state in PostgreSQL, how long a claim of this node holds without a renewal.
        public var lease: Duration = .seconds(10)
        /// The programs run when a download of this daemon completes or fails.
        public var hooks = DownloadHooks.Configuration()
        /// The overall rate by the clock (empty: none); outside its windows, the engine's
        /// `rateLimit` applies.
        public var limitSchedule = LimitSchedule()
        /// The zone the schedule's times are read in (default: the process's local time).
        public var limitZone: any ScheduleTimeZone = SystemTimeZone()
        /// The clock the schedule follows.
        public var limitClock: any WallClock = SystemWallClock()
        /// Called after each change of the overall rate (by the schedule's clock or a call), with
        /// what is in force and what comes next.
        public var onRateLimit: (@Sendable (RateScheduler.Status) -> Void)?

        /// Creates a configuration.
        public init(service: DownloadService.Configuration, server: DaemonServer.Configuration, secret: String?) {
            self.service = service
            self.server = server
            self.secret = secret
        }
    }

    /// The download service: the list, or for a node of a fleet the downloads it runs.
    public let service: DownloadService
    /// The node, when the state is in PostgreSQL.
    public let fleet: FleetNode?
    /// What the RPC drives: the service, or the fleet's list through the node.
    package let queue: any DownloadQueue
    /// The RPC.
    public let rpc: Aria2RPC
    /// The server.
    public let server: DaemonServer
    /// The hooks, when a program is configured.
    public let hooks: DownloadHooks?
    /// The overall rate: the schedule, and the rate set apart from it.
    public let limits: RateScheduler
    /// Whether a stop was asked for (and whether forced), for ``waitForStopRequest()``.
    private let stopRequest = ConditionLock(StopRequest())

    /// A request to stop.
    private struct StopRequest {
        var requested = false
        var force = false
    }

    /// Opens the service (restoring its list and starting what should run) and binds the server.
    ///
    /// - Throws: ``DaemonError`` when the state file cannot be opened or the address bound.
    public init(configuration: Configuration) throws(DaemonError) {
        // The transfers restored at the start run at the schedule's rate from their first byte.
        var opening = configuration
        let outside = configuration.service.downloader.rateLimit
        let startedAt = RateScheduler.seconds(configuration.limitClock.now())
        opening.service.downloader.rateLimit = configuration.limitSchedule.decision(at: startedAt, outside: outside,
                                                                                   in: configuration.limitZone).rate
        do throws(ServiceError) {
            (service, fleet) = try Self.open(opening)
        } catch {
            throw DaemonError(error.message)
        }
        let queue: any DownloadQueue = fleet ?? service
        self.queue = queue
        limits = RateScheduler(schedule: configuration.limitSchedule, outside: outside, zone: configuration.limitZone,
                               clock: configuration.limitClock) { [onRateLimit = configuration.onRateLimit] status in
            queue.setRateLimit(status.rate)
            onRateLimit?(status)
        }
        hooks = configuration.hooks.isEmpty ? nil
            : Self.watch(service, with: DownloadHooks(configuration: configuration.hooks), inFleet: fleet != nil)
        let stopRequest = self.stopRequest
        let secret = configuration.secret.flatMap { $0.isEmpty ? nil : $0 }
        rpc = Aria2RPC(service: queue, settings: .init(secret: secret, listen: configuration.server.listen,
                                                         connections: configuration.service.downloader.connectionsPerDownload),
                       limits: limits, onShutdown: { force in Self.request(stopRequest, force: force) })
        do throws(DaemonError) {
            server = try DaemonServer(configuration: configuration.server, rpc: rpc)
        } catch {
            queue.shutDown(timeout: .seconds(30))
            throw error
        }
    }

    /// The service, or the fleet node and its service when the state is in PostgreSQL.
    private static func open(_ configuration: Configuration) throws(ServiceError) -> (DownloadService, FleetNode?) {
        guard case .postgreSQL(let database) = configuration.service.state else {
            return (try DownloadService(configuration: configuration.service), nil)
        }
        var node = FleetNode.Configuration(node: configuration.node ?? FleetNode.defaultName, database: database,
                                           service: configuration.service)
        node.lease = configuration.lease
        node.address = configuration.server.listen.description
        let fleet = try FleetNode(configuration: node)
        return (fleet.service, fleet)
    }

    /// Runs `hooks` for each download of `service` that completes or fails. In a fleet, a run
    /// that ended `locked` (its claim taken, or its partial file held by another node) has not
    /// failed: it goes back to the queue, and no hook runs.
    private static func watch(_ service: DownloadService, with hooks: DownloadHooks, inFleet: Bool) -> DownloadHooks {
        service.addObserver { event in
            guard event.kind == .completed || event.kind == .failed, let download = service.download(event.id) else { return }
            if inFleet && download.failure?.code == DownloadError.Code.locked.name { return }
            hooks.downloadEnded(download)
        }
        return hooks
    }

    /// Starts serving, and following the rate schedule.
    ///
    /// - Throws: ``DaemonError`` when the system gives no thread or descriptor for the server's
    ///   loop, or no thread for the schedule's.
    public func start() throws(DaemonError) {
        try server.start()
        do throws(ResourceError) {
            try limits.start()
        } catch {
            throw DaemonError(error.message)
        }
    }

    /// Asks ``waitForStopRequest()`` to return.
    public func requestStop() {
        Self.request(stopRequest, force: false)
    }

    /// Notes a stop request in `stopRequest` and wakes ``waitForStopRequest()``.
    private static func request(_ stopRequest: ConditionLock<StopRequest>, force: Bool) {
        stopRequest.withLockBroadcasting {
            $0.requested = true
            $0.force = $0.force || force
        }
    }

    /// Blocks until ``requestStop()`` or `aria2.shutdown` asks the daemon to stop.
    public func waitForStopRequest() {
        stopRequest.wait(until: nil) { !$0.requested }
    }

    /// Stops accepting, closes every connection, stops the transfers (records synced; active
    /// downloads stay active for the next start) and closes the state file.
    public func stop() {
        server.stop()
        limits.stop()
        queue.shutDown(timeout: .seconds(30))
        hooks?.stop()
    }
}
