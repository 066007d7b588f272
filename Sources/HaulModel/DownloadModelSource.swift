#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Haul

/// A download that something other than a ``Downloader`` runs (a persistent download service,
/// say), seen the way a ``DownloadModel`` mirrors it: a stream of snapshots and three controls.
///
/// A model made with ``DownloadModel/init(observing:)`` starts mirroring the source on
/// ``DownloadModel/start()``; ``DownloadModel/pause()``, ``DownloadModel/resume()`` and
/// ``DownloadModel/cancel()`` call the source's.
public protocol DownloadModelSource: Sendable {
    /// What is downloaded.
    var request: DownloadRequest { get }
    /// Where it lands.
    var destination: Destination { get }
    /// The download's snapshots: the current one at once, then one per change (progress at
    /// most about ten times a second), until the download is over or gone.
    func snapshots() -> AsyncStream<DownloadModel.Snapshot>
    /// Pauses the download (connections closed, partial file kept).
    func pause()
    /// Resumes a paused download.
    func resume()
    /// Stops the download for good (its partial file may be kept).
    func cancel()
}

extension DownloadModel {
    /// Everything a ``DownloadModel`` shows, at one instant.
    public struct Snapshot: Sendable, Equatable {
        /// Where the download is in its life.
        public var state: State
        /// Bytes of the file on disk and valid.
        public var completedBytes: Int64
        /// The file's full length, once known.
        public var totalBytes: Int64?
        /// Recent throughput in bytes per second.
        public var bytesPerSecond: Double
        /// The finished file, once finished.
        public var fileURL: URL?
        /// Why it failed, once failed.
        public var error: DownloadError?

        /// Creates a snapshot.
        ///
        /// - Parameters:
        ///   - state: the state.
        ///   - completedBytes: bytes done.
        ///   - totalBytes: the full length, if known.
        ///   - bytesPerSecond: recent throughput.
        ///   - fileURL: the finished file.
        ///   - error: the failure.
        public init(state: State, completedBytes: Int64 = 0, totalBytes: Int64? = nil, bytesPerSecond: Double = 0,
                    fileURL: URL? = nil, error: DownloadError? = nil) {
            self.state = state
            self.completedBytes = completedBytes
            self.totalBytes = totalBytes
            self.bytesPerSecond = bytesPerSecond
            self.fileURL = fileURL
            self.error = error
        }

        /// Two snapshots are equal when everything but the error's underlying cause is.
        public static func == (lhs: Snapshot, rhs: Snapshot) -> Bool {
            lhs.state == rhs.state && lhs.completedBytes == rhs.completedBytes && lhs.totalBytes == rhs.totalBytes
                && lhs.bytesPerSecond == rhs.bytesPerSecond && lhs.fileURL == rhs.fileURL
                && lhs.error?.code == rhs.error?.code && lhs.error?.message == rhs.error?.message
        }
    }
}
