import Foundation
import HaulServer
import HaulTestSupport
import Testing
@testable import Haul
import HaulCore
import HaulHTTP

/// Issue 4, "Local faults", through the library: a missing or read-only folder, a disk that
/// fills up mid-transfer, symlinks planted where the download writes, resume records that
/// cannot be trusted, a crash before the final rename.
///
/// Each test checks the error code and exit status, the exact files left, and what the server
/// received. Tests that need a real read-only or full file system mount a small tmpfs (root
/// only) and are skipped with the reason elsewhere.
///
/// Exclusive: it mounts small scratch file systems and fills one up mid-transfer.
@Suite("Hostile local faults", .exclusive, .serialized, .timeLimit(.minutes(1)))
struct HostileLocalTests {
    @Test("a missing folder is created, parents included")
    func missingFolderIsCreated() async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { root in
            let dir = root.appendingPathComponent("a/b/c")
            let result = try await testDownloader().file(from: url(server, "/bytes/5000/x.bin"), to: .directory(dir))
            #expect(result.fileURL.path == dir.appendingPathComponent("x.bin").path)
            #expect(listFiles(root) == ["a"])
            #expect(listFiles(dir) == ["x.bin"])
            #expect(try contents(result.fileURL) == expectedContent(5000))
        }
    }

    /// Where a download into a read-only folder is pointed: the folder, a folder to create in
    /// it, an exact file in it.
    enum ReadOnlyTarget: String, CaseIterable, Sendable {
        case folder, subfolder, exactFile

        func destination(_ readOnly: URL) -> Destination {
            switch self {
            case .folder: .directory(readOnly)
            case .subfolder: .directory(readOnly.appendingPathComponent("sub"))
            case .exactFile: .file(readOnly.appendingPathComponent("x.bin"))
            }
        }
    }

    @Test("a folder that cannot be written fails with exit 3 before any network I/O",
          .enabled(if: ScratchMount.isAvailable, "\(ScratchMount.unavailableReason)"), arguments: ReadOnlyTarget.allCases)
    func readOnlyFolder(target: ReadOnlyTarget) async throws {
        let server = try HaulServer()
        try await ScratchMount.with(size: "1m", readOnly: true) { readOnly in
            let error = await expectFailure(testDownloader(), DownloadRequest(url: url(server, "/bytes/100/x.bin")),
                                            to: target.destination(readOnly))
            #expect(error?.code == .fileSystem, "\(error?.description ?? "")")
            #expect(error?.code.exitStatus == 3)
            #expect(error?.message.contains(readOnly.path) == true, "\(error?.message ?? "")")
            #expect(server.requests.isEmpty)
            #expect(listFiles(readOnly) == [])
        }
    }

    @Test("a disk that fills up mid-transfer: exit 3, no retry, partial and record kept, resumed once there is room",
          .enabled(if: ScratchMount.isAvailable, "\(ScratchMount.unavailableReason)"), arguments: [1, 4])
    func diskFullMidTransfer(connections: Int) async throws {
        let server = try HaulServer()
        try await ScratchMount.with(size: "2m") { dir in
            // 1.5 MB fits the 2 MiB disk when the transfer starts; once a connection has sent
            // 300 kB and a resume record exists, the server fills the disk, then sends the rest.
            let filling = DiskFillingFile(size: 1_500_000, seed: 1, etag: "\"v1\"", folder: dir, recordName: "file.bin.resume",
                                          fillAfter: 300_000)
            server.route("/file.bin") { try filling.respond(to: $0, on: $1) }
            let slow = Validators.etag.resource(size: 1_500_000)
            let downloader = resumeDownloader(connections: connections) { $0.minimumSegmentSize = 256 << 10 }
            let first = await runToEnd(downloader, DownloadRequest(url: url(server, "/file.bin")), to: .directory(dir))
            #expect(filling.fillerBytes ?? 0 > 0, "the filler was never written")
            #expect(first.error?.code == .diskFull, "\(first.error?.description ?? "finished")")
            #expect(first.error?.code.exitStatus == 3)
            #expect(!first.names.contains("retrying"), "a full disk was retried: \(first.names)")
            let requestsOfFirstRun = server.requests.count
            #expect(requestsOfFirstRun == first.started?.connections, "a full disk was retried: \(requestsOfFirstRun) requests")
            #expect(server.requests.allSatisfy { $0.header("Range") != nil })
            #expect(listFiles(dir) == ["file.bin.part", "file.bin.resume", "filler"])
            let record = try #require(loadResumeRecord("file.bin", in: dir), "the resume record was not kept")
            try expectRecordClaimsOnlyWrittenBytes(record, name: "file.bin", in: dir, resource: slow)
            #expect(record.completed.byteCount > 0)

            // Room again: the same download resumes from the record, and ends byte-identical.
            try FileManager.default.removeItem(at: dir.appendingPathComponent("filler"))
            #expect(await waitForIdle(server))
            server.setResource("/file.bin", slow)
            let second = await runToEnd(downloader, DownloadRequest(url: url(server, "/file.bin")), to: .directory(dir))
            #expect(second.error == nil, "\(second.error?.description ?? "")")
            #expect(second.startingOver.isEmpty, "\(second.startingOver)")
            #expect(second.started?.resumedFrom == record.completed.byteCount)
            let resumed = try #require(requests(of: server, after: requestsOfFirstRun).first)
            #expect(resumed.header("Range") == "bytes=\(firstMissingByte(record))-")
            #expect(resumed.header("If-Range") == "\"v1\"")
            #expect(listFiles(dir) == ["file.bin"])
            #expect(try contents(dir.appendingPathComponent("file.bin")) == slow.bytes(0..<slow.size))
        }
    }

    /// A body that comes whole with its head is written at once, without the free-space check
    /// before it (its one write reports a full disk the same way); one that does not is checked
    /// first. Either way: `diskFull`, exit 3, no retry, the partial kept.
    @Test("a small file on a disk without room for it: exit 3, no retry, partial kept",
          .enabled(if: ScratchMount.isAvailable, "\(ScratchMount.unavailableReason)"))
    func diskFullForASmallBody() async throws {
        let server = try HaulServer()
        try await ScratchMount.with(size: "1m") { dir in
            // About 48 KiB left on the 1 MiB disk; the file is 64 KiB.
            try Data(repeating: 7, count: 1_000_000).write(to: dir.appendingPathComponent("filler"))
            let error = await expectFailure(hostileDownloader(retries: 5), DownloadRequest(url: url(server, "/bytes/65536/x.bin")),
                                            to: .directory(dir))
            #expect(error?.code == .diskFull, "\(error?.description ?? "finished")")
            #expect(error?.code.exitStatus == 3)
            #expect(server.requests.count == 1)
            #expect(listFiles(dir).sorted() == ["filler", "x.bin.part"])
        }
    }

    @Test("a symlink planted as the partial, the record or its temporary is never followed",
          arguments: [".part", ".resume", ".rtmp"])
    func plantedSymlinkIsNotFollowed(suffix: String) async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { root in
            let outside = try OutsideFile(in: root)
            let dir = outside.folder
            try outside.plantLink(named: "file.bin" + suffix)
            // Slow enough for several resume records to be written over the planted link.
            let resource = Validators.etag.resource(size: 1_000_000, rate: 2_000_000)
            server.setResource("/file.bin", resource)
            let run = await runToEnd(resumeDownloader(connections: 2), DownloadRequest(url: url(server, "/file.bin")),
                                     to: .directory(dir))
            #expect(run.error == nil, "\(run.error?.description ?? "")")
            #expect(outside.isUntouched, "the link's target was written")
            #expect(listFiles(root) == ["dl", "victim.txt"])
            #expect(listFiles(dir) == ["file.bin"])
            #expect(try contents(dir.appendingPathComponent("file.bin")) == resource.bytes(0..<resource.size))
        }
    }

    @Test("an exact destination that is a symlink is replaced, its target left alone")
    func exactDestinationSymlink() async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { root in
            let outside = try OutsideFile(in: root)
            let dir = outside.folder
            let link = try outside.plantLink(named: "out.bin")
            let result = try await testDownloader().file(from: url(server, "/bytes/3000"), to: .file(link))
            #expect(result.fileURL.path == link.path)
            #expect(outside.isUntouched)
            #expect(listFiles(root) == ["dl", "victim.txt"])
            #expect(listFiles(dir) == ["out.bin"])
            #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: link.path)) == nil, "still a symlink")
            #expect(try contents(link) == expectedContent(3000))
        }
    }

    @Test("a name taken by a symlink to a file outside: never written through, whatever the policy",
          arguments: ConflictPolicy.allCases)
    func namedDestinationSymlink(policy: ConflictPolicy) async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { root in
            let outside = try OutsideFile(in: root)
            let (dir, victim) = (outside.folder, outside.victim)
            let link = try outside.plantLink(named: "x.bin")
            let request = DownloadRequest(url: url(server, "/bytes/3000/x.bin"), conflictPolicy: policy)
            let run = await runToEnd(testDownloader(), request, to: .directory(dir))

            #expect(outside.isUntouched, "the link's target was written")
            #expect(listFiles(root) == ["dl", "victim.txt"])
            let linkTarget = try? FileManager.default.destinationOfSymbolicLink(atPath: link.path)
            switch policy {
            case .rename:
                #expect(run.error == nil)
                #expect(listFiles(dir) == ["x.1.bin", "x.bin"])
                #expect(linkTarget == victim.path)
                #expect(try contents(dir.appendingPathComponent("x.1.bin")) == expectedContent(3000))
            case .overwrite:
                #expect(run.error == nil)
                #expect(listFiles(dir) == ["x.bin"])
                #expect(linkTarget == nil, "the link itself is replaced")
                #expect(try contents(link) == expectedContent(3000))
            case .skip:
                #expect(run.error == nil)
                #expect(run.names.last == "skipped", "\(run.names)")
                #expect(listFiles(dir) == ["x.bin"])
                #expect(linkTarget == victim.path)
            case .fail:
                #expect(run.error?.code == .destinationExists)
                #expect(run.error?.code.exitStatus == 10)
                #expect(listFiles(dir) == ["x.bin"])
                #expect(linkTarget == victim.path)
            }
        }
    }
}

/// Resume records that cannot be trusted, and the crash before the final rename.
@Suite("Hostile local faults: resume state", .throttled, .timeLimit(.minutes(1)))
struct HostileLocalResumeTests {
    static let size: Int64 = 2_000_000

    /// A record that is not a record, or that belongs to another file.
    enum Bad: String, CaseIterable, Sendable {
        /// 300 random bytes.
        case garbage
        /// A record of this URL claiming the partial's bytes, cut to its first 5 bytes.
        case truncated
        /// A valid record of another URL (another file of the same name elsewhere).
        case anotherFilesRecord
    }

    @Test("a record that is garbage, truncated or another file's is ignored: start over once, right bytes",
          arguments: Bad.allCases)
    func untrustedRecord(bad: Bad) async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { dir in
            let resource = Validators.etag.resource(size: Self.size)
            server.setResource("/file.bin", resource)
            // A partial whose first 800 kB are wrong: trusting any of these records would keep them.
            try Data(repeating: 0xEE, count: 800_000).write(to: dir.appendingPathComponent("file.bin.part"))
            let folder = try DestinationFolder(path: dir.path)
            func record(for path: String) throws -> ResumeRecord {
                let parsed = try HTTPURL.parse(server.url(path))
                var made = ResumeRecord(url: parsed, finalURL: parsed, etagHeader: "\"v1\"", lastModified: nil,
                                        totalLength: Self.size, completed: ByteRangeSet([0..<800_000]))
                // Checksums that match the (wrong) bytes on disk: only the record's own checks may refuse it.
                made.blockHashes = BlockHash.pieces(of: made.completed).map {
                    BlockHash(range: $0, crc32c: BlockHashes.crc(of: [UInt8](repeating: 0xEE, count: $0.count)))
                }
                return made
            }
            let recordURL = dir.appendingPathComponent("file.bin.resume")
            switch bad {
            case .garbage:
                var random = SplitMix64(seed: 4)
                try Data((0..<300).map { _ in UInt8.random(in: 0...255, using: &random) }).write(to: recordURL)
            case .truncated:
                try record(for: "/file.bin").save(for: "file.bin", in: folder)
                try Data(contentsOf: recordURL).prefix(5).write(to: recordURL)
            case .anotherFilesRecord:
                try record(for: "/elsewhere/file.bin").save(for: "file.bin", in: folder)
            }

            let second = await runToEnd(resumeDownloader(connections: 2), DownloadRequest(url: url(server, "/file.bin")),
                                        to: .directory(dir))

            #expect(second.error == nil, "\(second.error?.description ?? "")")
            #expect(second.startingOver.count == 1, "\(second.names)")
            #expect(second.names.first == "startingOver", "\(second.names)")
            #expect(second.started?.resumedFrom == 0)
            let first = try #require(server.requests.first)
            #expect(first.header("Range") == "bytes=0-")
            #expect(first.header("If-Range") == nil)
            #expect(server.bodyBytesSent >= Self.size)
            #expect(listFiles(dir) == ["file.bin"])
            #expect(try contents(dir.appendingPathComponent("file.bin")) == resource.bytes(0..<Self.size))
        }
    }

    @Test("a crash between the last write and the rename: the next run finishes without the body",
          arguments: [false, true])
    func crashBeforeRename(exactFile: Bool) async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { dir in
            // The files a kill leaves after the last checkpoint and before the rename. That window
            // cannot be hit from outside on purpose, so they are written with the library's own
            // partial-file and record code: every byte on disk and synced, a record claiming them.
            let resource = Validators.lastModified.resource(size: Self.size)
            let path = exactFile ? "/file.bin" : "/out.bin"   // with a folder, the URL names the file
            server.setResource(path, resource)
            let address = url(server, path)
            let folder = try DestinationFolder(path: dir.path)
            let partial = try PartialFile.createEmpty("out.bin" + PartialFile.suffix, in: folder)
            try resource.bytes(0..<resource.size).withUnsafeBytes { try partial.write($0, at: 0) }
            try partial.syncData()
            partial.closeKeeping()
            let parsed = try HTTPURL.parse(address.absoluteString)
            var record = ResumeRecord(url: parsed, finalURL: parsed, etagHeader: nil, lastModified: Validators.date,
                                      totalLength: resource.size, completed: ByteRangeSet([0..<resource.size]))
            record.blockHashes = BlockHash.pieces(of: record.completed).map {
                BlockHash(range: $0, crc32c: BlockHashes.crc(of: resource.bytes($0)))
            }
            try record.save(for: "out.bin", in: folder)
            #expect(listFiles(dir) == ["out.bin.part", "out.bin.resume"])

            let destination: Destination = exactFile ? .file(dir.appendingPathComponent("out.bin")) : .directory(dir)
            let run = await runToEnd(resumeDownloader(connections: 4), DownloadRequest(url: address), to: destination)

            #expect(run.error == nil, "\(run.error?.description ?? "")")
            #expect(run.finished)
            #expect(run.startingOver.isEmpty, "\(run.startingOver)")
            #expect(server.requests.count == 1)
            #expect(server.requests.first?.header("Range") == "bytes=\(resource.size)-")
            #expect(server.requests.first?.header("If-Range") == Validators.date)
            #expect(server.bodyBytesSent == 0)
            #expect(listFiles(dir) == ["out.bin"])
            #expect(try contents(dir.appendingPathComponent("out.bin")) == resource.bytes(0..<resource.size))
        }
    }
}
