import Foundation
import HaulServer
import HaulCore

/// A server route that fills the client's disk in the middle of the body, at a moment the
/// server controls, so a "disk full mid-transfer" test does not depend on timing.
///
/// Serves `size` bytes of `HaulServer.content(seed:)` with a strong ETag and single ranges
/// (`If-Range` compared with the ETag), closing each connection after its body. A connection
/// that has sent `fillAfter` body bytes goes on 1 KiB every 20 ms until `folder` holds
/// `recordName` (the client saved a resume record), then fills the file system of `folder`
/// with the file `filler` (``ScratchMount/fill(_:name:)``), and only then sends the rest at
/// full speed.
public final class DiskFillingFile: Sendable {
    /// The body length.
    public let size: Int64
    /// The content seed.
    public let seed: UInt64
    /// The ETag sent, quotes included.
    public let etag: String
    private let folder: URL
    private let recordName: String
    private let fillAfter: Int64
    private let filled = SharedStateLock<Int?>(nil)

    /// Creates the route's state; register it with `server.route(path) { try file.respond(to: $0, on: $1) }`.
    ///
    /// - Parameters:
    ///   - size: body length. - seed: content seed. - etag: the ETag, quotes included.
    ///   - folder: the folder the client writes into (on a small tmpfs).
    ///   - recordName: the resume record to wait for before filling, e.g. `file.bin.resume`.
    ///   - fillAfter: body bytes a connection sends before the disk is filled.
    public init(size: Int64, seed: UInt64, etag: String, folder: URL, recordName: String, fillAfter: Int64) {
        self.size = size
        self.seed = seed
        self.etag = etag
        self.folder = folder
        self.recordName = recordName
        self.fillAfter = fillAfter
    }

    /// The bytes of filler written, once the disk was filled (`nil` before).
    public var fillerBytes: Int? { filled.withLock { $0 } }

    /// Answers one request (see the type's description).
    public func respond(to request: RecordedRequest, on connection: ServerConnection) throws {
        let answer = RangedAnswer(to: request, size: size, etag: etag)
        let range = answer.range
        try connection.write(answer.head)
        let content = HaulServer.content(seed: seed)
        var offset = range.lowerBound
        while offset < range.upperBound {
            var step: Int64 = 16_384
            if offset - range.lowerBound >= fillAfter, fillerBytes == nil {
                if FileManager.default.fileExists(atPath: folder.appendingPathComponent(recordName).path) {
                    fillOnce()
                } else {
                    // Trickle on until the client checkpoints: it saves a record only as bytes arrive.
                    step = 1024
                    connection.sleep(seconds: 0.02)
                }
            }
            let next = min(range.upperBound, offset + step)
            try connection.write(content.bytes(offset..<next))
            offset = next
        }
    }

    private func fillOnce() {
        filled.withLock { filled in
            if filled == nil { filled = ScratchMount.fill(folder) }
        }
    }
}
