#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import ExampleSupport
import Haul
import HaulServer

/// A download service that reports `.progress(Double)` and `.finished(URL)` and saves into a
/// `MyDownloads` folder: the common `URLSession` service, done with Haul.
///
/// The usual version keeps one `AsyncThrowingStream` continuation in the service and yields every
/// download's progress into it, so two downloads at once mix their updates (or the second one
/// steals the stream), and it moves the file out of the temporary location inside
/// `didFinishDownloadingTo`, after which the system deletes it. Here each call gets its own
/// sequence (``Download/events`` of its own ``Download``), and the file is written straight into
/// `MyDownloads`: it appears there under its final name, atomically, only once it is complete.
final class DownloadService: Sendable {
    /// What a caller of ``updates(for:)`` sees.
    enum Update: Sendable, Equatable {
        /// The fraction done, 0...1.
        case progress(Double)
        /// The file, complete, in `MyDownloads`.
        case finished(URL)
    }

    private let downloader: Downloader
    /// Where finished files land.
    let folder: URL

    init(documents: URL, downloader: Downloader = Downloader()) {
        self.downloader = downloader
        folder = documents.appendingPathComponent("MyDownloads")
    }

    /// Starts downloading `url` into `MyDownloads` and returns this download's own updates.
    ///
    /// Breaking out of the loop does not stop the download; cancelling the task that iterates does.
    func updates(for url: URL) -> some AsyncSequence<Update, DownloadError> {
        downloader.download(url, to: .directory(folder)).events.compactMap { event -> Update? in
            switch event {
            case .progress(let progress): .progress(progress.fractionCompleted ?? 0)
            case .finished(let file), .skipped(let file): .finished(file)
            default: nil   // started, retrying, paused, resumed, startingOver
            }
        }
    }
}

@main
struct ProgressStream {
    static func main() async {
        let server = Example.startServer()
        defer { server.stop() }
        let documents = Example.makeFolder("progress-stream")
        defer { Example.removeFolder(documents) }

        // Two files at once, each paced at 4 MiB/s per connection so that progress is visible.
        let files = [
            ("/video.mp4", HaulServer.Resource(size: 6 << 20, seed: 1, etag: "\"video\"", rate: 4 << 20)),
            ("/podcast.mp3", HaulServer.Resource(size: 3 << 20, seed: 2, etag: "\"podcast\"", rate: 4 << 20)),
        ]
        for (path, resource) in files { server.setResource(path, resource) }
        let service = DownloadService(documents: documents)
        Example.say("progress-stream: two downloads at once from \(server.baseURL) into \(service.folder.path)")

        let finished = await withTaskGroup(of: (String, URL?, [Double]).self) { group in
            for (path, _) in files {
                group.addTask {
                    var fractions: [Double] = []
                    var file: URL?
                    do {
                        for try await update in service.updates(for: URL(string: server.url(path))!) {
                            switch update {
                            case .progress(let fraction):
                                fractions.append(fraction)
                                Example.say("  \(path): \(Int(fraction * 100))%")
                            case .finished(let url):
                                file = url
                                Example.say("  \(path): finished -> \(url.path)")
                            }
                        }
                    } catch {
                        Example.fail("\(path): \(error)")
                    }
                    return (path, file, fractions)
                }
            }
            var all: [String: (URL?, [Double])] = [:]
            for await (path, file, fractions) in group { all[path] = (file, fractions) }
            return all
        }

        for (path, resource) in files {
            guard let (file, fractions) = finished[path], let file else { Example.fail("\(path) did not finish") }
            Example.check(file.deletingLastPathComponent().lastPathComponent == "MyDownloads",
                          "\(path) landed in \(file.path), not in MyDownloads")
            Example.check(fractions == fractions.sorted(), "\(path): progress went backwards: \(fractions)")
            Example.check(fractions.last == 1, "\(path): the last progress was \(fractions.last ?? -1), not 1")
            Example.verify(file, resource)
        }
        let left = (try? FileManager.default.contentsOfDirectory(atPath: service.folder.path).sorted()) ?? []
        Example.check(left == ["podcast.mp3", "video.mp4"], "MyDownloads holds \(left)")
        Example.say("progress-stream: OK")
    }
}
