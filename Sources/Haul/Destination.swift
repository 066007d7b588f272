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
    /// Into `folder`, a relative path below `root` made of untrusted text (a daemon's `dir` and
    /// `out` options); with a `name`, exactly that file in it (an existing file is replaced only
    /// when the download succeeds), else named as for ``directory(_:)``.
    ///
    /// Each component of `folder` and the `name` are checked by Unicode scalars (no empty, `.`,
    /// `..` or dots-only component, no `/`, NUL or control character, nothing that normalizes
    /// into `/`), and the folder is opened (created when missing) one component at a time relative
    /// to its parent's descriptor without following symbolic links, so nothing is ever written
    /// outside `root`. A refused component or a link fails the download with
    /// ``DownloadError/Code/unsafePath``.
    case contained(root: URL, folder: String, name: String?)
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
