#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Haul
import HaulCore

/// One daemon of a fleet: it claims downloads from the queue the fleet shares in PostgreSQL
/// (``FleetQueue``), runs them in a service of its own (whose list is kept in memory: the
/// fleet's queue is what lasts), renews its claims, and writes each result under its claim.
///
/// A claim it loses (another node took the download after its lease ended) stops the transfer
/// here at once; a result it cannot write (PostgreSQL unreachable) is kept and written when the
/// server is back. Additions anywhere in the fleet wake it (`LISTEN`), as does a download of its
/// own ending; otherwise it wakes to renew, a third of a lease after the last time.
public final class FleetNode: Sendable {
    /// How a node runs.
    public struct Configuration: Sendable {
        /// This node's name, unique in the fleet.
        public var node: String
        /// The database.
        public var database: PostgresSettings
        /// The node's own service: its root (the node's `--dir`), engine and `-j`.
        public var service: DownloadService.Configuration
        /// How long a claim holds without a renewal.
        public var lease: Duration = .seconds(10)
        /// What the node tells the others it can be reached at (for the dashboard).
        public var address = ""

        /// Creates a configuration; the service's state is ignored (kept in memory).
        public init(node: String, database: PostgresSettings, service: DownloadService.Configuration) {
            self.node = node
            self.database = database
            self.service = service
        }
    }

    /// The node's own service (what it runs now).
    public let service: DownloadService
    let configuration: Configuration
    let state = ConditionLock(State())
    let wakeup = WakeupDescriptor()
    /// The connection the callers' reads and changes go through (one at a time).
    let adder = ConditionLock<FleetQueue?>(nil)
    /// The RPC's additions not committed yet.
    let additions = SharedStateLock(FleetAdditions())
    /// Who hears of the fleet's events.
    let observers = SharedStateLock(Observers())
    private let thread = ThreadPool(maximumThreads: 1)

    struct State {
        /// The claims this node holds, by download.
        var claims: [DownloadID: FleetClaim] = [:]
        /// Rows of downloads that ended here, to write under their claims.
        var results: [DownloadID: StoreRow] = [:]
        /// What happened here, for the loop to tell the fleet.
        var events: [ServiceEvent] = []
        /// Whether the table may hold claims of this node it does not know of (at start, and
        /// after a claim's commit failed).
        var claimsInDoubt = true
        /// Downloads given back because their partial file was locked, not claimed here until then.
        var cooldown: [DownloadID: ContinuousClock.Instant] = [:]
        var stopping = false
        var running = true
        /// The last error the loop met (PostgreSQL unreachable), `nil` once it works again.
        var lastError: ServiceError?
    }

    /// Connects, then claims and runs downloads until ``stop()``.
    ///
    /// - Throws: `store` when PostgreSQL cannot be reached or the loop gets no thread.
    public init(configuration: Configuration) throws(ServiceError) {
        self.configuration = configuration
        var local = configuration.service
        local.state = .memory
        let gate = CommitGate()
        local.commitGate = { id in gate.allows(id) }
        service = try DownloadService(configuration: local)
        let worker = try FleetQueue(configuration.database, node: configuration.node)
        let listener = try FleetQueue(configuration.database, node: configuration.node)
        try listener.listen()
        service.addObserver { [weak self] event in self?.observe(event) }
        gate.node.withLock { $0 = WeakNode(node: self) }
        let link = Connections(worker: worker, listener: listener)
        do throws(ResourceError) {
            try thread.run(name: "haul-fleet") { [self] in loop(link) }
        } catch {
            service.shutDown()
            throw ServiceError(.store, "the fleet node has no thread: \(error.message)")
        }
    }

    /// This node's name in the fleet.
    public var name: String { configuration.node }

    /// The claims this node holds now.
    var claims: [FleetClaim] {
        state.withLock { Array($0.claims.values) }
    }

    /// The last error the node met talking to PostgreSQL, `nil` when it works.
    public var lastError: ServiceError? {
        state.withLock { $0.lastError }
    }

    /// Stops: the transfers pause (partial files kept), their claims go back to the queue as
    /// waiting for another node, results not yet written are written, and the connections close.
    public func stop() {
        state.withLockBroadcasting { $0.stopping = true }   // wakes a loop waiting out a backoff
        wakeup.signal()
        state.wait(until: nil) { $0.running }
        adder.withLock { queue in
            queue?.close()
            queue = nil
        }
    }

    /// Stops as a killed node would: nothing is written, the claims are left to expire.
    func abandon() {
        state.withLockBroadcasting { state in
            state.stopping = true
            state.claims = [:]
            state.results = [:]
        }
        wakeup.signal()
        state.wait(until: nil) { $0.running }
    }

    /// Where the node's service asks whether a download's file may take its name: the node,
    /// known once it is made (the service is made first).
    final class CommitGate: Sendable {
        let node = SharedStateLock(WeakNode())

        func allows(_ id: DownloadID) -> Bool {
            node.withLock { $0.node }?.mayCommit(id) ?? false
        }
    }

    struct WeakNode: Sendable {
        weak var node: FleetNode?
    }

    /// The two connections: the worker's claims and writes, the listener's notifications.
    struct Connections: @unchecked Sendable {   // used by the loop's thread only
        let worker: FleetQueue
        let listener: FleetQueue
    }
}

// MARK: - Additions

extension FleetNode {
    /// Adds a download to the fleet's queue (any node with a free slot claims it).
    ///
    /// - Returns: its identifier, once the addition is durable in PostgreSQL.
    /// - Throws: `invalidArgument` or `unsafePath` as ``DownloadService/add(_:)`` does (checked
    ///   against this node's root); `store` when PostgreSQL cannot be reached.
    public func add(_ request: ServiceRequest) throws(ServiceError) -> DownloadID {
        try add([request])[0]
    }

    /// Adds downloads in one transaction: all of them, or none.
    public func add(_ requests: [ServiceRequest]) throws(ServiceError) -> [DownloadID] {
        var rows: [StoreRow] = []
        for request in requests { rows.append(try row(request)) }
        try withCaller { (queue) throws(ServiceError) in try queue.add(rows) }
        return rows.map(\.id)
    }

    /// The row of a new download, checked against this node's root, with its identifier.
    func row(_ request: ServiceRequest) throws(ServiceError) -> StoreRow {
        var entry = try service.newEntry(request)
        entry.id = request.id ?? DownloadID.random { _ in false }
        return StoreRow(entry)
    }
}
