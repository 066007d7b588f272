/// The exit statuses of `haul` (the table in README.md, "Exit status").
public enum ExitStatus {
    /// Every download finished and verified.
    public static let success: Int32 = 0
    /// A generic failure.
    public static let failure: Int32 = 1
    /// A usage error: bad option, bad or unsupported URL, invalid value.
    public static let usage: Int32 = 2
    /// A local file error.
    public static let localFile: Int32 = 3
    /// Interrupted by SIGINT.
    public static let interrupted: Int32 = 130

    /// The status of a run of several downloads: 0 when all succeeded, else the lowest
    /// non-zero status among them.
    ///
    /// - Parameter statuses: one status per download (0 for success).
    /// - Returns: the status the process exits with.
    public static func combined<S: Sequence>(_ statuses: S) -> Int32 where S.Element == Int32 {
        statuses.filter { $0 != 0 }.min() ?? success
    }
}
