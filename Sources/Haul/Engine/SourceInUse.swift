/// One server of a transfer over ranges, as it is at one instant: what it gave and whether it
/// still takes connections.
package struct SourceInUse: Sendable, Equatable {
    /// Its URL, redacted (no userinfo, no signature).
    package var url: String
    /// Which of the request's URLs it is: 0 the request's own, 1 its first mirror...; `nil` for
    /// a mirror the server named (`Link: rel=duplicate`).
    package var requestIndex: Int?
    /// Connections it has now.
    package var connections: Int
    /// Bytes written from it.
    package var bytes: Int64
    /// Bytes per second per connection at the last measurement, if measured.
    package var bytesPerSecondPerConnection: Double?
    /// Why it was set aside, when it was.
    package var setAsideReason: String?

    /// Bytes per second over all its connections at the last measurement (0 before one).
    package var bytesPerSecond: Double {
        (bytesPerSecondPerConnection ?? 0) * Double(connections)
    }
}
