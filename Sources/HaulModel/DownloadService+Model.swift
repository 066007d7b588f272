#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Haul
import HaulService

extension DownloadService {
    /// A source a ``DownloadModel`` can mirror (``DownloadModel/init(observing:)``): the
    /// download's ``snapshots(of:)`` as the model shows them, and its controls (pause, resume,
    /// remove).
    ///
    /// - Throws: `notFound` when there is no such download.
    public func modelSource(for id: DownloadID) throws(ServiceError) -> some DownloadModelSource {
        guard let current = download(id), let url = current.urls.first.flatMap(URL.init(string:)) else {
            throw ServiceError(.notFound, "GID \(id.hex) is not found")
        }
        let destination: Destination = current.filePath.map { .file(URL(fileURLWithPath: $0)) } ?? .directory(current.directory)
        return ServiceDownloadSource(service: self, id: id, request: DownloadRequest(url: url, key: id.hex),
                                     destination: destination)
    }
}

extension DownloadModel.Snapshot {
    /// How a ``DownloadModel`` shows a download of a ``DownloadService``: an active download is
    /// queued until its first byte, a removed one cancelled.
    ///
    /// - Parameter download: the service's snapshot.
    public init(_ download: ServiceDownload) {
        let state: DownloadModel.State = switch download.status {
        case .waiting: .queued
        case .active: download.bytesPerSecond > 0 || download.completedBytes > 0 ? .running : .queued
        case .paused: .paused
        case .complete: .finished
        case .error: .failed
        case .removed: .cancelled
        }
        let error = download.failure.map { DownloadError(.internalError, $0.message, httpStatus: $0.httpStatus) }
        self.init(state: state, completedBytes: download.completedBytes, totalBytes: download.totalBytes,
                  bytesPerSecond: download.bytesPerSecond, fileURL: download.status == .complete ? download.fileURL : nil,
                  error: error)
    }
}

/// A download of a ``DownloadService`` as a ``DownloadModel`` sees it.
struct ServiceDownloadSource: DownloadModelSource {
    let service: DownloadService
    let id: DownloadID
    let request: DownloadRequest
    let destination: Destination

    /// The service's snapshots as the model's; a download forgotten before it was over ends
    /// with a cancelled one.
    func snapshots() -> AsyncStream<DownloadModel.Snapshot> {
        let downloads = service.snapshots(of: id)
        let (stream, continuation) = AsyncStream<DownloadModel.Snapshot>.makeStream(bufferingPolicy: .bufferingNewest(64))
        let relay = Task {
            var last: DownloadModel.State?
            for await download in downloads {
                let snapshot = DownloadModel.Snapshot(download)
                last = snapshot.state
                continuation.yield(snapshot)
            }
            if last?.isOver != true { continuation.yield(DownloadModel.Snapshot(state: .cancelled)) }
            continuation.finish()
        }
        continuation.onTermination = { _ in relay.cancel() }
        return stream
    }

    /// Pauses the download in the service.
    func pause() { try? service.pause(id) }
    /// Puts the paused download back in the service's queue.
    func resume() { try? service.resume(id) }
    /// Removes the download from the service's queue (its partial file stays).
    func cancel() { try? service.remove(id) }
}
