/// A ``StateStore`` that keeps nothing: the list ends with the service. A fleet node's own
/// service runs on it (the fleet's queue in PostgreSQL is what lasts; see ``FleetNode``).
final class MemoryStore: StateStore {
    func load(residentResults: Int) -> (rows: [StoreRow], stored: [(id: DownloadID, position: Double)]) {
        ([], [])
    }

    func rows(_ ids: [DownloadID]) -> [DownloadID: StoreRow] {
        [:]
    }

    func resultRows() -> [StoreRow] {
        []
    }

    func apply(_ changes: [StoreChange]) {}

    func close() {}
}
