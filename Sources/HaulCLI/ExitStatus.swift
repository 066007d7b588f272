import Haul

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

    /// Every status `haul` exits with and what it means, in order: the manual's EXIT STATUS and
    /// README.md's table (`ReadmeTests` holds them equal). Each download failure's
    /// ``DownloadError/Code/exitStatus`` is one of them.
    static let meanings: [(status: Int32, meaning: String)] = [
        (success, "every download finished and verified"),
        (failure, "generic failure, or the system had no thread, descriptor or memory to give (`resourceExhausted`)"),
        (usage, "usage error: bad option, bad or unsupported URL, invalid value"),
        (localFile, "local file error: cannot create or write, disk full, not a regular file, unsafe path"),
        (DownloadError.Code.networkError.exitStatus, "network failure after retries: refused, reset, DNS, timeout, stalled, body cut short"),
        (DownloadError.Code.tlsHandshakeFailed.exitStatus, "TLS failure: certificate not trusted, hostname mismatch, handshake failed"),
        (DownloadError.Code.authenticationRefused.exitStatus, "authentication refused: 401, 403, 407"),
        (DownloadError.Code.malformedResponse.exitStatus, "protocol error: malformed response, framing, range mismatch, limits exceeded, redirect refused or looping"),
        (DownloadError.Code.httpStatus.exitStatus, "server error response: any other 4xx or 5xx after retries"),
        (DownloadError.Code.checksumMismatch.exitStatus, "integrity failure: checksum or length mismatch"),
        (DownloadError.Code.destinationExists.exitStatus, "destination exists and `--on-conflict=fail`"),
        (DownloadError.Code.locked.exitStatus, "another process is downloading the same file (lock held)"),
        (interrupted, "interrupted by SIGINT; the partial download is kept"),
    ]

    /// The status of a run of several downloads: 0 when all succeeded, else the lowest
    /// non-zero status among them.
    ///
    /// - Parameter statuses: one status per download (0 for success).
    /// - Returns: the status the process exits with.
    public static func combined<S: Sequence>(_ statuses: S) -> Int32 where S.Element == Int32 {
        statuses.filter { $0 != 0 }.min() ?? success
    }
}
