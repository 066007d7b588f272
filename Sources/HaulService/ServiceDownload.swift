#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Haul

/// One download of a ``DownloadService`` as it is at one instant.
public struct ServiceDownload: Sendable {
    /// Where a download is in its life. The first three are the queue; the last three are
    /// results, kept until removed.
    public enum Status: String, Sendable, Hashable, CaseIterable {
        /// Transferring (or waiting for its server).
        case active
        /// In the queue, to run when a slot is free.
        case waiting
        /// In the queue, held until resumed.
        case paused
        /// Finished: complete, verified and under its final name.
        case complete
        /// Failed; ``ServiceDownload/failure`` says why.
        case error
        /// Removed by the user before it finished (its partial file stays for a later resume).
        case removed

        /// Whether the download is a result (complete, error, removed) rather than in the queue.
        public var isStopped: Bool { self == .complete || self == .error || self == .removed }
    }

    /// Its identifier.
    public var id: DownloadID
    /// The URLs given, in order; the first is the one downloaded.
    public var urls: [String]
    /// Its options.
    public var options: ServiceDownloadOptions
    /// Where it is in its life.
    public var status: Status
    /// The folder it lands in (inside the service's root), as an absolute path.
    public var directoryPath: String
    /// The file's absolute path, once its name is known (from `out`, or from the server when it
    /// answered).
    public var filePath: String?
    /// The file's full length, once known.
    public var totalBytes: Int64?
    /// Bytes of the file on disk and valid.
    public var completedBytes: Int64
    /// Which byte ranges are on disk and valid, in order, when known: as of the last checkpoint
    /// of a segmented transfer, else `0..<completedBytes`.
    public var completedRanges: [Range<Int64>]
    /// Recent throughput in bytes per second (0 unless active).
    public var bytesPerSecond: Double
    /// Connections in use (0 unless active).
    public var connections: Int
    /// Why it failed (``Status/error`` only).
    public var failure: ServiceFailure?
    /// In a fleet, the node that runs it (active) or ran it (a result); `nil` otherwise.
    public var node: String? = nil

    /// The folder it lands in.
    public var directory: URL { URL(fileURLWithPath: directoryPath, isDirectory: true) }
    /// The file, once its name is known.
    public var fileURL: URL? { filePath.map { URL(fileURLWithPath: $0) } }
}

/// Why a download of a ``DownloadService`` failed: what its ``DownloadError`` said.
public struct ServiceFailure: Sendable, Equatable {
    /// The stable name of the ``DownloadError/Code`` (for example `"httpStatus"`).
    public var code: String
    /// The command-line exit status of that code.
    public var exitStatus: Int32
    /// The HTTP status, for a status failure.
    public var httpStatus: Int?
    /// One readable sentence, secrets redacted.
    public var message: String

    /// Creates a failure.
    ///
    /// - Parameters:
    ///   - code: the error code's stable name.
    ///   - exitStatus: the code's exit status.
    ///   - httpStatus: the HTTP status, if any.
    ///   - message: the sentence.
    public init(code: String, exitStatus: Int32, httpStatus: Int? = nil, message: String) {
        self.code = code
        self.exitStatus = exitStatus
        self.httpStatus = httpStatus
        self.message = message
    }

    /// The failure of a ``DownloadError``.
    ///
    /// - Parameter error: the download's error.
    public init(_ error: DownloadError) {
        self.init(code: error.code.name, exitStatus: error.code.exitStatus, httpStatus: error.httpStatus,
                  message: error.message)
    }
}

/// The options of one download of a ``DownloadService``.
public struct ServiceDownloadOptions: Sendable, Equatable {
    /// One request header.
    public struct Header: Sendable, Equatable {
        /// The field name (an HTTP token).
        public var name: String
        /// The value.
        public var value: String

        /// Creates a header.
        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    /// The folder, relative to the service's root (`""` is the root itself).
    public var directory: String = ""
    /// The file name (one path component); `nil` lets the server or the URL name it.
    public var fileName: String?
    /// Extra request headers, sent to the URL's own origin only.
    public var headers: [Header] = []
    /// Connections for this download, 1–16 (`nil`: the service's default).
    public var connections: Int?
    /// A speed cap for this download in bytes per second (`nil`: none of its own).
    public var rateLimit: Int64?
    /// The digest the file must have.
    public var checksum: Checksum?
    /// The checksum of each piece (a Metalink document's `<pieces>`): each is checked as it completes.
    public var pieces: PieceChecksums?
    /// Whether an existing file of the same name is replaced (else a free name is picked).
    public var overwrite = false
    /// Whether a partial file of the same name is continued (`false`: the first run starts over).
    public var continues = true

    /// Creates the default options.
    public init() {}
}

/// What ``DownloadService/add(_:)`` adds.
public struct ServiceRequest: Sendable {
    /// The URLs (`http` or `https`); the first is downloaded, the others are kept as given.
    public var urls: [String]
    /// The download's options.
    public var options: ServiceDownloadOptions
    /// Where in the waiting queue it goes (0 is the front); `nil` for the end.
    public var position: Int?
    /// Whether it is added paused.
    public var paused: Bool
    /// The identifier it must have; `nil` picks a random free one.
    public var id: DownloadID?

    /// Creates a request.
    ///
    /// - Parameters:
    ///   - urls: the URLs; the first is downloaded.
    ///   - options: the download's options.
    ///   - position: its place in the waiting queue, `nil` for the end.
    ///   - paused: whether it starts paused.
    ///   - id: the identifier it must have, if any.
    public init(urls: [String], options: ServiceDownloadOptions = .init(), position: Int? = nil, paused: Bool = false,
                id: DownloadID? = nil) {
        self.urls = urls
        self.options = options
        self.position = position
        self.paused = paused
        self.id = id
    }
}
