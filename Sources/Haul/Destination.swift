#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Where a download lands.
public enum Destination: Sendable, Hashable {
    /// Into this folder (created if missing), named from the server, the URL or the MIME type.
    case directory(URL)
    /// Exactly this file. An existing file is replaced only when the download succeeds.
    case file(URL)
}

/// What to do when the name chosen from the server or the URL already exists in the folder.
public enum ConflictPolicy: String, Sendable, CaseIterable {
    /// Pick a free name: `name.1.ext`, `name.2.ext`, ...
    case rename
    /// Replace the existing file (atomically, once the download succeeded).
    case overwrite
    /// Leave the existing file and do not download.
    case skip
    /// Fail with ``DownloadError/Code/destinationExists``.
    case fail
}
