/// One connection's segment of a transfer over ranges, as it is at one instant: the bytes
/// `start..<position` are written, `position..<end` are still to come (`end` exclusive, and
/// `start <= position <= end`). A connection that takes over another's tail shrinks that one's
/// `end`.
package struct SegmentInFlight: Sendable, Equatable {
    /// Where the segment began.
    package var start: Int64
    /// Where the connection's next byte goes.
    package var position: Int64
    /// Where the segment ends (exclusive).
    package var end: Int64

    /// Creates a segment.
    package init(start: Int64, position: Int64, end: Int64) {
        self.start = start
        self.position = position
        self.end = end
    }
}
