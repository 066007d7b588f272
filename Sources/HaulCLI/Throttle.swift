/// Lets an action through at most once per interval, on times the caller supplies.
///
/// Times are offsets from any fixed origin (the command passes the time since it started), so
/// tests drive it with made-up instants.
struct Throttle: Sendable {
    /// The shortest time between two actions.
    let interval: Duration
    private var last: Duration?

    /// Creates a throttle that lets the first action through.
    init(interval: Duration) {
        self.interval = interval
    }

    /// Whether an action may happen at `now`; when it may, `now` becomes the last action time.
    mutating func permits(at now: Duration) -> Bool {
        if let last, now - last < interval { return false }
        last = now
        return true
    }

    /// Records an action at `now` that happened regardless of the throttle.
    mutating func record(_ now: Duration) {
        last = now
    }

    /// Lets the next action through whatever its time.
    mutating func reset() {
        last = nil
    }
}
