import HaulHTTP
import HaulCore
/// Chooses the name of a downloaded file when the user did not give one (`-o`).
///
/// In order: the `Content-Disposition` of the final response, the last path segment of the
/// URL the user gave (never of a redirect target), then `download`. The chosen name is
/// sanitised (``FileNameSanitizer``); when it has no extension, one is added from the
/// `Content-Type` if the type is on the allow-list (``MIMEExtensions``).
package enum FileNamer: Sendable {
    /// The name used when neither the server nor the URL offers one.
    static let fallbackName = "download"

    /// The safe file name for a download.
    ///
    /// - Parameters:
    ///   - contentDisposition: the `Content-Disposition` value of the final response, if any.
    ///   - originalURLPath: the percent-encoded path of the URL the user gave, without the
    ///     query (e.g. `URL.path(percentEncoded: true)`); a redirect never chooses the name.
    ///   - contentType: the `Content-Type` value of the final response, if any.
    ///   - urlName: `name(contentDisposition: nil, originalURLPath:, contentType: nil)` when the
    ///     caller has it already (it is not worked out again).
    /// - Returns: a sanitised, non-empty name of at most ``FileNameSanitizer/maximumByteCount`` bytes.
    package static func name(contentDisposition: String?, originalURLPath: String, contentType: String?,
                             urlName: String? = nil) -> String {
        let chosen = contentDisposition.flatMap(ContentDisposition.filename(from:)).flatMap(FileNameSanitizer.sanitize)
            ?? urlName
            ?? FileNameSanitizer.sanitize(lastPathSegment(of: originalURLPath))
            ?? fallbackName
        guard !FileNameParts.hasExtension(chosen),
              let ext = contentType.flatMap(MIMEExtensions.fileExtension(forContentType:))
        else { return chosen }
        return FileNameSanitizer.sanitize("\(chosen).\(ext)") ?? chosen
    }

    /// The last segment of a percent-encoded path, decoded.
    ///
    /// Anything from a `?` or `#` on is dropped. A path ending in `/` has an empty last
    /// segment. `%2F` and `%5C` decode to `/` and `\`, which the sanitiser then treats as
    /// separators. An invalid escape (`%`, `%G1`) is kept as written; decoded bytes that are
    /// not valid UTF-8 become U+FFFD (and then `_`).
    ///
    /// - Parameter path: a percent-encoded URL path.
    /// - Returns: the decoded segment, possibly empty.
    static func lastPathSegment(of path: String) -> String {
        let withoutQuery = path.utf8.prefix { $0 != UInt8(ascii: "?") && $0 != UInt8(ascii: "#") }
        let start = withoutQuery.lastIndex(of: UInt8(ascii: "/")).map(withoutQuery.index(after:)) ?? withoutQuery.startIndex
        let segment = withoutQuery[start...]
        if !segment.contains(UInt8(ascii: "%")) { return String(Substring(segment)) }   // nothing to decode
        return String(decoding: PercentDecoding.lenient(Array(segment)).bytes, as: UTF8.self)
    }
}
