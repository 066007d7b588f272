import Foundation
import Haul
import HaulServer
import HaulTestSupport
import Testing

/// Downloads and returns the error the download ended with (fails the test if it succeeded).
func expectFailure(_ downloader: Downloader, _ request: DownloadRequest, to destination: Destination,
                   sourceLocation: SourceLocation = #_sourceLocation) async -> DownloadError? {
    do {
        let result = try await downloader.file(from: request, to: destination)
        Issue.record("expected a failure, got \(result.fileURL.path)", sourceLocation: sourceLocation)
        return nil
    } catch {
        return error
    }
}

