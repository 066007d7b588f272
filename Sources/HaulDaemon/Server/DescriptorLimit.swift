#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `RLIMIT_NOFILE` as `getrlimit(2)` takes it (Glibc imports it as an enum case, Darwin as an `Int32`).
#if canImport(Glibc)
private let openFilesResource = Int32(RLIMIT_NOFILE.rawValue)
#else
private let openFilesResource: Int32 = RLIMIT_NOFILE
#endif

/// The process's limit on open descriptors (`ulimit -n`), which bounds the connections the
/// daemon can hold.
public enum DescriptorLimit {
    /// The soft limit now (`nil` when unknown or unlimited).
    public static var current: Int? {
        var limit = rlimit()
        guard getrlimit(openFilesResource, &limit) == 0, limit.rlim_cur < rlim_t(Int.max) else { return nil }
        return Int(limit.rlim_cur)
    }

    /// Raises the soft limit to the hard one, for a program that serves many connections
    /// (`haul daemon` at its start; a library leaves process settings to its program).
    ///
    /// - Returns: the soft limit after the call (`nil` when unknown or unlimited).
    @discardableResult
    public static func raiseToHardLimit() -> Int? {
        var limit = rlimit()
        guard getrlimit(openFilesResource, &limit) == 0 else { return nil }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            _ = setrlimit(openFilesResource, &raised)
        }
        return current
    }

    /// The connections a server may hold within the soft limit, keeping `reserve` descriptors
    /// for everything else (the state file, the transfers), and at least 64.
    static func connections(upTo wanted: Int, reserve: Int = 256) -> Int {
        guard let current else { return wanted }
        // A WebSocket holds two descriptors (its socket and its outbox's wake-up).
        return max(64, min(wanted, (current - reserve) / 2))
    }
}
