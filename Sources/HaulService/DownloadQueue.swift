import Haul

/// What a daemon's JSON-RPC drives: a list of downloads to add to, read and change. One
/// ``DownloadService`` is one (its list in its state file); a ``FleetNode`` is another (the
/// list a fleet shares in PostgreSQL, whichever node runs each download).
///
/// The `enqueue` changes return once made; their ``DownloadService/Acknowledged/ticket`` is
/// what ``waitUntilDurable(_:)`` waits for (`nil`: durable already).
package protocol DownloadQueue: AnyObject, Sendable {
    func enqueueAdd(_ request: ServiceRequest) throws(ServiceError) -> DownloadService.Acknowledged<DownloadID>
    func enqueuePause(_ id: DownloadID) throws(ServiceError) -> DownloadService.Acknowledged<Void>
    func enqueuePauseAll() throws(ServiceError) -> DownloadService.Acknowledged<Void>
    func enqueueResume(_ id: DownloadID) throws(ServiceError) -> DownloadService.Acknowledged<Void>
    func enqueueResumeAll() throws(ServiceError) -> DownloadService.Acknowledged<Void>
    func enqueueRemove(_ id: DownloadID) throws(ServiceError) -> DownloadService.Acknowledged<Void>
    func enqueueForgetResult(_ id: DownloadID) throws(ServiceError) -> DownloadService.Acknowledged<Void>
    func enqueueForgetResults() throws(ServiceError) -> DownloadService.Acknowledged<Void>
    func enqueueMove(_ id: DownloadID, by offset: Int, from origin: DownloadService.QueueOrigin) throws(ServiceError)
        -> DownloadService.Acknowledged<Int>
    func enqueueChangeOptions(_ id: DownloadID, to options: ServiceDownloadOptions) throws(ServiceError)
        -> DownloadService.Acknowledged<Void>
    func enqueueChangeURLs(_ id: DownloadID, to urls: [String]) throws(ServiceError) -> DownloadService.Acknowledged<Void>
    /// Blocks until the changes of the tickets `first` to `ticket` are durable.
    ///
    /// - Throws: when any of them failed (one of another caller's in between may fail it too:
    ///   a false error is possible, a false success is not).
    func waitUntilDurable(_ ticket: UInt64?, since first: UInt64?) throws(ServiceError)

    // The reads throw where the list is not in memory (a fleet's, while PostgreSQL cannot be
    // reached): an empty answer then would say the downloads are gone.
    func download(_ id: DownloadID) throws(ServiceError) -> ServiceDownload?
    func activeDownloads() throws(ServiceError) -> [ServiceDownload]
    func waitingDownloads(_ pick: (Int) -> Range<Int>) throws(ServiceError) -> [ServiceDownload]
    func stoppedDownloads(_ pick: (Int) -> Range<Int>) throws(ServiceError) -> [ServiceDownload]
    func identifiers(withPrefix prefix: String, limit: Int) throws(ServiceError) -> [DownloadID]
    /// The downloads that match, in the list's order: active, the queue, the results; the places
    /// `pick` chooses given how many match, and that count.
    func matchingDownloads(_ filter: DownloadFilter, _ pick: (Int) -> Range<Int>)
        throws(ServiceError) -> (total: Int, downloads: [ServiceDownload])
    /// Every download that matches, in the list's order, with its status.
    func matches(_ filter: DownloadFilter) throws(ServiceError) -> [DownloadMatch]
    func segmentsInFlight(_ id: DownloadID) -> [SegmentInFlight]
    func sourcesInUse(_ id: DownloadID) -> [SourceInUse]
    func currentStatistics() throws(ServiceError) -> ServiceStatistics

    var maximumActiveDownloads: Int { get }
    func setMaximumActiveDownloads(_ count: Int) throws(ServiceError)
    var rateLimit: Int64? { get }
    func setRateLimit(_ bytesPerSecond: Int64?)
    var rootPath: String { get }

    /// The nodes of the fleet the list belongs to (none for one service).
    func fleetNodes() throws(ServiceError) -> [FleetNodeStatus]

    func addObserver(_ observer: @escaping @Sendable (ServiceEvent) -> Void) -> Int
    func removeObserver(_ token: Int)
    /// Stops every transfer and lets go of the list.
    func shutDown(timeout: Duration)
}

extension DownloadService: DownloadQueue {
    package func fleetNodes() -> [FleetNodeStatus] { [] }
    package func currentStatistics() -> ServiceStatistics { statistics }
    /// One service's commits are in order: the last ticket's covers every one before.
    package func waitUntilDurable(_ ticket: UInt64?, since first: UInt64?) throws(ServiceError) {
        try waitUntilDurable(ticket)
    }
}
