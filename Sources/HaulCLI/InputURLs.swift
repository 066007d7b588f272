#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Haul

/// Where the URLs of a run come from and how they are checked before any network I/O.
enum InputURLs {
    /// The URLs listed in a `-i` file: one per line, surrounding blanks trimmed, blank lines and
    /// lines starting with `#` ignored.
    static func urls(inList text: String) -> [String] {
        // Split on the bytes CR and LF: the same lines as splitting the characters (CR, LF and
        // CRLF are characters of their own), without walking the whole list by grapheme.
        text.utf8.split(omittingEmptySubsequences: true, whereSeparator: { $0 == 0x0A || $0 == 0x0D })
            .map { String(Substring($0)).trimmingBlanks() }
            .filter { !$0.isEmpty && !$0.hasPrefix("#") }
    }

    /// Reads the `-i` list: `-` is standard input, other paths are relative to the working directory.
    ///
    /// - Throws: ``DownloadError/Code/fileSystem`` when the file cannot be read.
    static func readList(_ path: String, terminal: some Terminal) throws(DownloadError) -> String {
        if path == "-" { return terminal.readStandardInput() }
        let url = URL(fileURLWithPath: path, relativeTo: URL(fileURLWithPath: terminal.currentDirectory.path, isDirectory: true))
        let descriptor = open(url.path, O_RDONLY)
        guard descriptor >= 0 else {
            throw DownloadError(.fileSystem, "cannot read '\(path)': \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        let (bytes, failure) = readAll(from: descriptor)
        if let failure {
            throw DownloadError(.fileSystem, "cannot read '\(path)': \(String(cString: strerror(failure)))")
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Checks one URL as typed: parseable by `URL(string:)`, no spaces or control characters,
    /// `http` or `https`, a host, a port in 1...65535, and accepted by the library
    /// (``DownloadRequest/validatedURL(_:)``).
    ///
    /// - Returns: the parsed URL.
    /// - Throws: ``DownloadError/Code/invalidURL`` or ``DownloadError/Code/unsupportedScheme``.
    static func validate(_ text: String) throws(DownloadError) -> URL {
        let plainASCII = text.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F }   // the usual case, checked fast
        if !plainASCII, text.unicodeScalars.contains(where: { $0.properties.isWhitespace || $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }) {
            throw DownloadError(.invalidURL, "invalid URL: it contains spaces or control characters")
        }
        guard let url = URL(string: text) else {
            throw DownloadError(.invalidURL, "invalid URL")
        }
        guard let scheme = url.scheme?.lowercased() else {
            throw DownloadError(.unsupportedScheme, "unsupported URL: it needs http:// or https://")
        }
        guard scheme == "http" || scheme == "https" || StorageURL.schemes.contains(scheme) else {
            throw DownloadError(.unsupportedScheme, "unsupported URL scheme '\(HumanFormat.printable(scheme))': "
                                + "only http, https, s3 and oss are supported")
        }
        guard let host = url.host, !host.isEmpty else {
            throw DownloadError(.invalidURL, "invalid URL: no host")
        }
        if let port = url.port, !(1...65535).contains(port) {
            throw DownloadError(.invalidURL, "invalid URL: port \(port) is out of range")
        }
        // s3:// and oss:// name a bucket and key; their signer makes the http(s) URL.
        if StorageURL.schemes.contains(scheme) { return url }
        // Whatever the library would refuse once the download starts (a host such as `host!` or
        // `[zz::1]`, a malformed %-escape) is refused here, before any download does network I/O.
        return try DownloadRequest.validatedURL(text, parsed: url)
    }
}
