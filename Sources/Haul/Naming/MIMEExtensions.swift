import HaulHTTP
/// The file extension Haul adds to a name that has none, from the response's `Content-Type`.
///
/// Only an allow-list of common, inert types maps to an extension. Anything that could run
/// when double-clicked (programs, installers, scripts, packages, disk images) maps to none,
/// and so do `application/octet-stream` and every type not listed.
enum MIMEExtensions: Sendable {
    /// Media type (lowercase `type/subtype`) to extension (no dot).
    static let table: [String: String] = [
        "text/plain": "txt",
        "text/html": "html",
        "text/css": "css",
        "text/csv": "csv",
        "text/markdown": "md",
        "text/tab-separated-values": "tsv",
        "application/json": "json",
        "application/xml": "xml",
        "text/xml": "xml",
        "application/pdf": "pdf",
        "application/epub+zip": "epub",
        "image/png": "png",
        "image/jpeg": "jpg",
        "image/gif": "gif",
        "image/webp": "webp",
        "image/avif": "avif",
        "image/bmp": "bmp",
        "image/tiff": "tiff",
        "audio/mpeg": "mp3",
        "audio/ogg": "ogg",
        "audio/wav": "wav",
        "audio/x-wav": "wav",
        "audio/flac": "flac",
        "audio/aac": "aac",
        "video/mp4": "mp4",
        "video/webm": "webm",
        "video/quicktime": "mov",
        "video/x-matroska": "mkv",
        "application/zip": "zip",
        "application/gzip": "gz",
        "application/x-gzip": "gz",
        "application/x-tar": "tar",
        "application/x-xz": "xz",
        "application/zstd": "zst",
        "application/x-bzip2": "bz2",
        "application/x-7z-compressed": "7z",
        "application/wasm": "wasm",
        "font/woff": "woff",
        "font/woff2": "woff2",
        "font/ttf": "ttf",
        "font/otf": "otf",
    ]

    /// Extensions that run code when opened; never produced (lowercase, no dot).
    static let executableExtensions: Set<String> = [
        "exe", "msi", "bat", "cmd", "com", "sh", "ps1", "js", "vbs", "jar",
        "apk", "app", "dmg", "deb", "rpm", "scr", "pif",
    ]

    /// The extension for a `Content-Type` value.
    ///
    /// Parameters (`; charset=utf-8`) and surrounding whitespace are ignored; type and
    /// subtype are compared ignoring case.
    ///
    /// - Parameter contentType: the field value, e.g. `Text/Plain; charset=utf-8`.
    /// - Returns: the extension without its dot, or `nil` for unknown or unsafe types.
    static func fileExtension(forContentType contentType: String) -> String? {
        let mediaType = contentType.prefix { $0 != ";" }.trimmingWhitespace().lowercased()
        guard let ext = table[mediaType], !executableExtensions.contains(ext) else { return nil }
        return ext
    }
}

extension Substring {
    /// This text without leading and trailing whitespace.
    fileprivate func trimmingWhitespace() -> Substring {
        guard let first = firstIndex(where: { !$0.isWhitespace }),
              let last = lastIndex(where: { !$0.isWhitespace })
        else { return "" }
        return self[first...last]
    }
}
