#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import HaulHTTP

/// The last step of a download whose bytes are all written and verified: make them durable and
/// give the file its name (`fsync`, rename without replacing, `fsync` of the folder).
///
/// It runs on the download's thread, or, for a small file, on the ``BatchCommitter``'s thread,
/// which makes many finished files durable with one sync while the download's thread moves on
/// to the next download. It owns the name's reservation from its creation and releases it when
/// it ends, on whichever thread. A class: it is handed from thread to thread and kept in the
/// batch's lists, and copying its dozen fields each time showed in the profile of small files.
final class FileCommit: Sendable {
    let partial: PartialFile
    /// The name (the file is `name.part` until the rename).
    let name: String
    /// The file URL of `name` (made once per download: it is a parse).
    let fileURL: URL
    /// Whether this download reserved `name` (a partial file found complete on disk did not).
    let ownsName: Bool
    let byteCount: Int64
    let head: ResponseHead
    /// Whether an existing file of the final name may be replaced (`-o`, `--on-conflict=overwrite`).
    let replaceAllowed: Bool
    /// Whether a name that appeared meanwhile makes the file take the next free name.
    let renameOnConflict: Bool
    /// Whether a resume record may exist beside the partial file (it is removed after the rename).
    let recordMayExist: Bool
    let sha256: String?
    let target: DownloadTarget
    /// What each server gave (several only).
    let sources: [SourceReport]

    var folder: DestinationFolder { target.folder }

    /// The commit of `partial` under `name`, as the properties say.
    init(partial: PartialFile, name: String, fileURL: URL, ownsName: Bool, byteCount: Int64, head: ResponseHead,
         replaceAllowed: Bool, renameOnConflict: Bool, recordMayExist: Bool, sha256: String?, target: DownloadTarget,
         sources: [SourceReport] = []) {
        self.sources = sources
        self.partial = partial
        self.name = name
        self.fileURL = fileURL
        self.ownsName = ownsName
        self.byteCount = byteCount
        self.head = head
        self.replaceAllowed = replaceAllowed
        self.renameOnConflict = renameOnConflict
        self.recordMayExist = recordMayExist
        self.sha256 = sha256
        self.target = target
    }

    /// Syncs the data, renames, syncs the folder and releases the reservations.
    ///
    /// - Throws: `fileSystem`, `diskFull`, `destinationExists`; see ``run(_:data:)``.
    func run() throws(DownloadError) -> DownloadResult {
        try Self.run([self], data: [.unsynced])[0].get()
    }

    /// Where a file's data stands when its commit runs.
    enum DataState {
        /// Durable already (the batch committer synced it).
        case synced
        /// To be synced by the commit (`fsync`).
        case unsynced
        /// Writing it back failed: the commit fails with this error.
        case failed(DownloadError)
    }

    /// Commits `commits` together: each file's data is synced (when `data` says `unsynced`),
    /// then the files of each folder are renamed, and the folder is synced once for all of them.
    /// On failure a partial file is kept when it can be resumed or when a file of its name
    /// appeared (`diskFull`, `destinationExists`), else removed; a file renamed before its
    /// folder's sync failed keeps its new name.
    ///
    /// - Returns: one result for each commit, in order.
    static func run(_ commits: [FileCommit], data: [DataState]) -> [Result<DownloadResult, DownloadError>] {
        var failures = [DownloadError?](repeating: nil, count: commits.count)
        var results = [DownloadResult?](repeating: nil, count: commits.count)
        for (index, commit) in commits.enumerated() {
            switch data[index] {
            case .synced:
                break
            case .unsynced:
                do throws(DownloadError) { try commit.partial.syncFinished() } catch { failures[index] = error }
            case .failed(let error):
                failures[index] = error
            }
        }
        let byFolder = Dictionary(grouping: commits.indices.filter { failures[$0] == nil }) { commits[$0].folder.identity }
        for indices in byFolder.values {
            let folder = commits[indices[0]].folder
            for index in indices {
                do throws(DownloadError) { results[index] = try commits[index].rename() } catch { failures[index] = error }
            }
            guard indices.contains(where: { results[$0] != nil }) else { continue }
            do throws(DownloadError) {
                try folder.sync()   // FolderSync groups it with other threads' syncs of this folder
            } catch {
                for index in indices where failures[index] == nil { failures[index] = error }
            }
        }
        return commits.indices.map { index in
            let result: Result<DownloadResult, DownloadError>
            if let done = results[index], failures[index] == nil {
                result = .success(done)
            } else {
                result = .failure(failures[index] ?? DownloadError(.internalError, "a commit ended without a result"))
            }
            commits[index].end(result, renamed: results[index] != nil)
            return result
        }
    }

    /// Gives the file its name; if that name appeared meanwhile, `renameOnConflict` moves on to
    /// the next free name, anything else keeps the partial file.
    private func rename() throws(DownloadError) -> DownloadResult {
        var finalName = name
        while true {
            do throws(DownloadError) {
                try partial.publish(as: finalName, replace: replaceAllowed)
                // At once, not after the folder's sync: a kill in between would leave the record
                // beside a finished file, where nothing ever reads or removes it.
                if recordMayExist { ResumeRecord.remove(for: name, in: folder) }
                if finalName != name { target.release(finalName) }   // the name is taken now: the file has it
                return DownloadResult(response: head, fileURL: finalName == name ? fileURL : target.fileURL(finalName),
                                      byteCount: byteCount, skipped: false,
                                      sha256: sha256, sources: sources)
            } catch {
                if finalName != name { target.release(finalName) }
                guard error.code == .destinationExists, renameOnConflict, !replaceAllowed,
                      let next = target.nextFreeName(after: name) else { throw error }
                finalName = next
            }
        }
    }

    /// Closes the file (releasing its lock) and forgets the reservation; a failed file's resume
    /// record goes with its partial file unless that is kept. A file renamed before its commit failed (the folder's sync) stays under its new name: the
    /// `.part` name may be another download's by then.
    private func end(_ result: Result<DownloadResult, DownloadError>, renamed: Bool) {
        defer { if ownsName { target.release(name) } }
        if case .failure(let error) = result, !renamed {
            if error.code == .diskFull || error.code == .destinationExists {
                partial.closeKeeping()
            } else {
                ResumeRecord.remove(for: name, in: folder)
                partial.discard()
            }
            return
        }
        partial.closeKeeping()   // renamed, its record removed with the rename
    }
}
