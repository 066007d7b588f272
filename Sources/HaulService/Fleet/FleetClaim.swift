/// A claim on a download: the node runs it under this fencing number until it lets go or its
/// lease ends and another node claims it (with a higher number).
struct FleetClaim: Hashable, Sendable {
    let id: DownloadID
    let fence: Int64
}
