#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Haul
import HaulCore

extension Runner {
    /// The URLs given, then the Metalink documents their servers named (`--metalink=follow`),
    /// then the files of every document those rounds brought (``MetalinkInput/isDocument(_:from:)``).
    ///
    /// - Returns: the exit status of the whole run.
    func downloadWithDescriptions(_ sources: [[CheckedURL]], planned: [MetalinkInput.Planned?], texts: [String],
                                  reach: Reach) async -> Int32 {
        let given = await download(sources, planned: planned, texts: texts, reach: reach)
        guard given.status != ExitStatus.interrupted else { return given.status }
        var statuses = [given.status]
        var documents = given.documents
        if !given.described.isEmpty {
            let texts = given.described.map(\.absoluteString)
            guard let links = check(texts.map { [$0] }) else { return ExitStatus.usage }
            let fetched = await download(links, planned: links.map { _ in nil }, texts: texts, reach: reach, round: .documents)
            guard fetched.status != ExitStatus.interrupted else { return fetched.status }
            statuses.append(fetched.status)
            documents += fetched.documents
        }
        guard !documents.isEmpty else { return ExitStatus.combined(statuses) }
        return ExitStatus.combined(statuses + [await downloadDescribed(by: documents, reach: reach)])
    }

    /// The files that the Metalink documents at `documents` describe, downloaded as those of a
    /// local document; the documents stay where they were saved. One level only: a document
    /// among those files is a file like any other.
    ///
    /// - Returns: the exit status of this round.
    private func downloadDescribed(by documents: [String], reach: Reach) async -> Int32 {
        var entries: [[String]] = []
        var planned: [MetalinkInput.Planned?] = []
        for path in documents {
            do throws(DownloadError) {
                let document = try MetalinkInput.files(at: path, in: URL(fileURLWithPath: terminal.currentDirectory.path))
                if !options.quiet { for warning in document.warnings { terminal.write("haul: warning: \(HumanFormat.printable(warning))\n", to: .error) } }
                entries += document.files.map(\.urls)
                planned += document.files.map { $0 }
            } catch {
                terminal.write("haul: \(HumanFormat.printable(error.message))\n", to: .error)
                return error.code.exitStatus
            }
        }
        guard !entries.isEmpty else { return ExitStatus.success }
        guard let sources = check(entries) else { return ExitStatus.usage }
        return await download(sources, planned: planned, texts: entries.map { $0[0] }, reach: reach, round: .files).status
    }
}

/// What one round of downloads finds for the next (``Runner/Round``): the Metalink documents it
/// brought, and, with `--metalink=follow`, the downloads that gave way to the document their
/// server names (each cancelled as it starts). Shared with the downloads' callback threads.
final class FollowState: Sendable {
    private struct State {
        var tokens: [DownloadToken] = []
        var documents: [Int: String] = [:]
        var described: [Int: URL] = [:]
    }
    private let state = SharedStateLock(State())
    private let round: Runner.Round
    private let followsLinks: Bool
    private let planned: [MetalinkInput.Planned?]
    private let urls: [URL]

    /// - Parameters:
    ///   - metalink: whether `--metalink=follow` was given (it acts in the first round only).
    ///   - planned: which downloads are files of a document (those are never followed).
    ///   - urls: each download's URL.
    init(round: Runner.Round, metalink: Bool, planned: [MetalinkInput.Planned?], urls: [URL]) {
        self.round = round
        followsLinks = metalink && round == .given
        self.planned = planned
        self.urls = urls
    }

    /// The paths of the documents the round brought, in the order of the downloads.
    var documents: [String] { state.withLock { $0.documents }.sorted { $0.key < $1.key }.map(\.value) }

    /// The documents the servers named, in the order of the downloads that gave way to them.
    var described: [URL] { state.withLock { $0.described }.sorted { $0.key < $1.key }.map(\.value) }

    /// Keeps the downloads' tokens, and cancels those that gave way before they were known.
    func track(_ tokens: [DownloadToken]) {
        let early = state.withLock { state in
            state.tokens = tokens
            return Array(state.described.keys)
        }
        for index in early { tokens[index].cancel() }
    }

    /// Download `index` started: with `--metalink=follow`, one whose server names a document
    /// gives way to it.
    func started(_ index: Int, _ start: DownloadStart) {
        guard followsLinks, planned[index] == nil, let document = start.metalinkURL else { return }
        let token = state.withLock { state -> DownloadToken? in
            state.described[index] = document
            return index < state.tokens.count ? state.tokens[index] : nil
        }
        token?.cancel()
    }

    /// Download `index` succeeded: a document when the round says so. (One that ended before its
    /// cancellation took effect stays as it is, and its document is not followed.)
    func finished(_ index: Int, _ done: DownloadResult) {
        let isDocument = switch round {
        case .given: planned[index] == nil && MetalinkInput.isDocument(done, from: urls[index])
        case .documents: true
        case .files: false
        }
        state.withLock { state in
            state.described[index] = nil
            if isDocument { state.documents[index] = done.fileURL.path }
        }
    }

    /// The document download `index` gave way to, when its `result` is that cancellation.
    func gaveWay(_ index: Int, _ result: Result<DownloadResult, DownloadError>) -> URL? {
        guard case .failure(let error) = result, error.code == .cancelled else { return nil }
        return state.withLock { $0.described[index] }
    }
}
