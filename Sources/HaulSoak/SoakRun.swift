import Foundation
import Haul
import HaulServer

/// Runs the soak's downloads and checks what they left.
enum SoakRun {
    /// How one download ended.
    struct Outcome: Sendable {
        var file: SoakFile
        var fileURL: URL?
        var error: DownloadError?
        var retries: Int
    }

    /// What the checks found.
    struct Report {
        var identical = 0
        var failedByCode: [String: Int] = [:]
        var retries = 0
        var corrupt: [String] = []
        var unexpectedErrors: [String] = []
        var unexpectedFiles: [String] = []
    }

    /// The settings of the soak's downloader: many at once, segmented above 1 MiB, short
    /// timeouts, quick retries.
    static func configuration(jobs: Int, retries: Int) -> Downloader.Configuration {
        var configuration = Downloader.Configuration()
        configuration.maximumActiveDownloads = jobs
        configuration.maximumConnectionsPerHost = 64
        configuration.connectionsPerDownload = 4
        configuration.minimumSegmentSize = 512 << 10
        configuration.connectTimeout = .seconds(2)
        configuration.headerTimeout = .seconds(2)
        configuration.stallTimeout = .seconds(1)
        configuration.retry = RetryPolicy(maximumRetries: retries, initialDelay: .milliseconds(50), maximumDelay: .milliseconds(500))
        configuration.bufferSize = 256 << 10
        return configuration
    }

    /// Starts every file at once (the downloader queues all but `jobs`) and waits for all.
    ///
    /// The downloader is released on return, so its idle connections close.
    static func downloadAll(_ files: [SoakFile], from server: HaulServer, into folder: URL, jobs: Int,
                            retries: Int) async -> [Outcome] {
        let downloader = Downloader(configuration: configuration(jobs: jobs, retries: retries))
        return await withTaskGroup(of: Outcome.self) { group in
            for file in files {
                let download = downloader.download(URL(string: server.url(file.path))!, to: .directory(folder))
                group.addTask {
                    var retries = 0
                    do throws(DownloadError) {
                        for try await event in download.events {
                            if case .retrying = event { retries += 1 }
                        }
                        let result = try await download.result()
                        return Outcome(file: file, fileURL: result.fileURL, error: nil, retries: retries)
                    } catch {
                        return Outcome(file: file, fileURL: nil, error: error, retries: retries)
                    }
                }
            }
            var outcomes: [Outcome] = []
            for await outcome in group { outcomes.append(outcome) }
            return outcomes
        }
    }

    /// Checks every finished file byte for byte, every failure's code, and every file in `folder`.
    ///
    /// A failed download may leave `NAME.part` and `NAME.resume` only when it failed in a way
    /// that keeps the partial for resume (a network failure after retries, a full disk); any
    /// other file in the folder is unexpected.
    static func check(_ outcomes: [Outcome], in folder: URL) -> Report {
        var report = Report()
        var allowed: Set<String> = []
        for outcome in outcomes.sorted(by: { $0.file.index < $1.file.index }) {
            let file = outcome.file
            report.retries += outcome.retries
            if let error = outcome.error {
                report.failedByCode[error.code.name, default: 0] += 1
                if error.code == .internalError || error.code == .cancelled {
                    report.unexpectedErrors.append("\(file.name): \(error)")
                }
                if error.code.exitStatus == 4 || error.code == .diskFull {
                    allowed.insert(file.name + ".part")
                    allowed.insert(file.name + ".resume")
                }
                continue
            }
            guard let url = outcome.fileURL, url.lastPathComponent == file.name else {
                report.corrupt.append("\(file.name): finished as \(outcome.fileURL?.path ?? "nothing")")
                continue
            }
            allowed.insert(file.name)
            if let difference = firstDifference(url, file) {
                report.corrupt.append("\(file.name) (\(file.size) bytes): \(difference)")
            } else {
                report.identical += 1
            }
        }
        let present = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        for name in present.sorted() where !allowed.contains(name) {
            report.unexpectedFiles.append("left in the folder: \(name)")
        }
        return report
    }

    /// Where the file differs from what the server serves for `file`, or `nil` when it is identical.
    static func firstDifference(_ url: URL, _ file: SoakFile) -> String? {
        guard let handle = try? FileHandle(forReadingFrom: url) else { return "cannot be read" }
        defer { try? handle.close() }
        let content = HaulServer.content(seed: file.seed)
        var offset: Int64 = 0
        while true {
            let chunk = (try? handle.read(upToCount: 1 << 20)) ?? Data()
            if chunk.isEmpty { break }
            let end = offset + Int64(chunk.count)
            guard end <= file.size else { return "longer than \(file.size) bytes" }
            if !chunk.elementsEqual(content.bytes(offset..<end)) { return "differs within bytes \(offset)..<\(end)" }
            offset = end
        }
        return offset == file.size ? nil : "only \(offset) of \(file.size) bytes"
    }
}
