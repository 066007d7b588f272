extension Duration {
    /// Whole milliseconds, rounded up, never negative.
    package var milliseconds: Int64 {
        let (seconds, attoseconds) = components
        if seconds < 0 || attoseconds < 0 { return 0 }
        return seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
    }

    /// Whole microseconds, never negative.
    package var microseconds: Int64 {
        let (seconds, attoseconds) = components
        if seconds < 0 || attoseconds < 0 { return 0 }   // components truncate: -0.5 s is (0, -5e17)
        return seconds * 1_000_000 + attoseconds / 1_000_000_000_000
    }

    /// The duration in seconds as a Double.
    package var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}

