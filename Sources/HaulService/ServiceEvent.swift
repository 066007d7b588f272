/// A change in a ``DownloadService``'s list, as its service-wide event stream tells it.
///
/// Progress is not an event here (ask ``DownloadService/download(_:)`` or follow one download's
/// snapshots); these are the changes of state, in the order the service made them.
public struct ServiceEvent: Sendable, Equatable {
    /// What happened.
    public enum Kind: String, Sendable, Equatable {
        /// Added to the queue (waiting or paused).
        case added
        /// Became active: its transfer starts.
        case started
        /// Paused (by the user, or added paused).
        case paused
        /// Back in the queue after a pause.
        case unpaused
        /// Finished: complete and under its final name.
        case completed
        /// Failed.
        case failed
        /// Removed by the user before it finished.
        case removed
        /// Its result was removed from the list (it is forgotten).
        case forgotten
    }

    /// The download.
    public var id: DownloadID
    /// What happened to it.
    public var kind: Kind

    /// Creates an event.
    public init(id: DownloadID, kind: Kind) {
        self.id = id
        self.kind = kind
    }
}
