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
import Dispatch
import Haul
import HaulCore

/// Where the URLs of a run come from and how they are checked before any network I/O.
enum InputURLs {
    /// The URLs listed in a `-i` file: one per line, surrounding blanks trimmed, blank lines and
    /// lines starting with `#` ignored.
    static func urls(inList text: String) -> [String] {
        // Lines end at the bytes CR and LF: the same lines as splitting the characters (CR, LF
        // and CRLF are characters of their own), read from the bytes in place (splitting and
        // trimming by character cost ~3,800 instructions per line).
        var text = text
        return text.withUTF8 { bytes in
            var urls: [String] = []
            var start = 0
            while start < bytes.count {
                var end = start
                while end < bytes.count, bytes[end] != 0x0A, bytes[end] != 0x0D { end += 1 }
                if let url = entry(UnsafeBufferPointer(rebasing: bytes[start..<end])) { urls.append(url) }
                start = end + 1
            }
            return urls
        }
    }

    /// The URL on one line of a list, or `nil` for a blank line or a comment.
    private static func entry(_ line: UnsafeBufferPointer<UInt8>) -> String? {
        guard line.allSatisfy({ $0 < 0x80 }) else {
            // Trimmed by character, as elsewhere: a space that a combining mark follows is kept.
            let trimmed = String(decoding: line, as: UTF8.self).trimmingBlanks()
            return trimmed.isEmpty || trimmed.hasPrefix("#") ? nil : trimmed
        }
        var first = 0, end = line.count
        while first < end, line[first] == 0x20 || line[first] == 0x09 { first += 1 }
        while end > first, line[end - 1] == 0x20 || line[end - 1] == 0x09 { end -= 1 }
        guard first < end, line[first] != UInt8(ascii: "#") else { return nil }
        return String(decoding: UnsafeBufferPointer(rebasing: line[first..<end]), as: UTF8.self)
    }

    /// The URLs of one line of a list: one file's servers, separated by tabs (aria2's convention),
    /// each trimmed of blanks; the line itself when it has no tab.
    static func sources(onLine line: String) -> [String] {
        guard line.utf8.contains(0x09) else { return [line] }
        let parts = line.utf8.split(separator: 0x09).map { String(decoding: $0, as: UTF8.self).trimmingBlanks() }
        let urls = parts.filter { !$0.isEmpty }
        return urls.isEmpty ? [line] : urls
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

    /// ``check(_:)`` of each text, in order. A long list is checked on several threads at once:
    /// the check costs ~13,000 instructions per URL (two parses), which for 1,000 URLs held the
    /// first request back by ~3 ms.
    static func checkAll(_ texts: [String]) -> [Result<CheckedURL, DownloadError>] {
        @Sendable func checkOne(_ text: String) -> Result<CheckedURL, DownloadError> {
            do throws(DownloadError) { return .success(try check(text)) } catch { return .failure(error) }
        }
        let parts = min(ProcessInfo.processInfo.activeProcessorCount, texts.count / parallelCheckMinimum, 8)
        guard parts > 1 else { return texts.map(checkOne) }
        let checked = SharedStateLock([[Result<CheckedURL, DownloadError>]](repeating: [], count: parts))
        DispatchQueue.concurrentPerform(iterations: parts) { part in
            let range = texts.count * part / parts ..< texts.count * (part + 1) / parts
            let results = texts[range].map(checkOne)
            checked.withLock { $0[part] = results }
        }
        return checked.withLock { $0.flatMap { $0 } }
    }

    /// The fewest URLs each thread of ``checkAll(_:)`` takes (~0.4 ms of checking): a shorter list
    /// is checked on the calling thread alone.
    static let parallelCheckMinimum = 128

    /// Checks one URL as typed: parseable by `URL(string:)`, no spaces or control characters,
    /// `http` or `https`, a host, a port in 1...65535, and accepted by the library
    /// (``DownloadRequest/validatedURL(_:)``).
    ///
    /// - Returns: the parsed URL, and the library's parse of it when it has one, for
    ///   ``DownloadRequest/parsedURL`` (`nil` for `s3://` and `oss://`, and for a URL that
    ///   `URL(string:)` rewrote).
    /// - Throws: ``DownloadError/Code/invalidURL`` or ``DownloadError/Code/unsupportedScheme``.
    static func check(_ text: String) throws(DownloadError) -> CheckedURL {
        let isPlain = { (byte: UInt8) in byte > 0x20 && byte < 0x7F }
        // The usual case, checked fast (contiguous bytes: the generic walk cost ~1,300 instructions).
        let plainASCII = text.utf8.withContiguousStorageIfAvailable { $0.allSatisfy(isPlain) } ?? text.utf8.allSatisfy(isPlain)
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
        if StorageURL.schemes.contains(scheme) { return CheckedURL(unparsed: url) }
        // Whatever the library would refuse once the download starts (a host such as `host!` or
        // `[zz::1]`, a malformed %-escape) is refused here, before any download does network I/O.
        return try DownloadRequest.checkedURL(text, parsed: url)
    }
}
