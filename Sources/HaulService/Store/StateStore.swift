/// Where a ``DownloadService`` keeps its list: each download's URLs, options, status, place and
/// result. Two kinds implement it: ``SQLiteStore`` (a state file, the default) and
/// ``PostgresStore`` (a PostgreSQL database). Progress is not kept here: the partial files'
/// resume records hold the bytes.
///
/// A store is used by one thread at a time (the service's owner while it loads, then
/// ``StoreWriter``'s thread); ``apply(_:)`` is one transaction, durable when it returns.
protocol StateStore: AnyObject {
    /// What a service holds in memory: every row of the queue (active, waiting, paused) and
    /// of the newest `residentResults` results, and the identifier and position of each older
    /// result, oldest first.
    ///
    /// - Throws: `store` when reading fails.
    func load(residentResults: Int) throws(ServiceError) -> (rows: [StoreRow], stored: [(id: DownloadID, position: Double)])

    /// The rows of `ids` that the store holds.
    ///
    /// - Throws: `store` when reading fails.
    func rows(_ ids: [DownloadID]) throws(ServiceError) -> [DownloadID: StoreRow]

    /// Every result's row (complete, error, removed), in no order: what the filter's index
    /// holds of the results a service leaves to the store.
    ///
    /// - Throws: `store` when reading fails.
    func resultRows() throws(ServiceError) -> [StoreRow]

    /// Applies changes in one transaction: all of them are durable once this returns, or none.
    ///
    /// - Throws: `store` when the transaction fails (it is rolled back).
    func apply(_ changes: [StoreChange]) throws(ServiceError)

    /// Lets go of the store (its lock goes with it); it cannot be used after.
    func close()
}

/// One change to a ``StateStore``.
enum StoreChange: Equatable {
    /// Insert or replace a download's row.
    case save(StoreRow)
    /// Delete a download's row.
    case delete(DownloadID)
    /// Change the status of a download's row (and nothing else).
    case status(DownloadID, ServiceDownload.Status)
}
