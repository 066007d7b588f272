/// Hides the secrets in a URL before it is printed.
///
/// Works on the text, so URLs that do not parse are redacted too: the userinfo
/// (`user:password@`) is removed, and the value of every query parameter whose name looks like a
/// credential (signature, token, key, secret, password, auth, credential, session...) becomes
/// `REDACTED`. The fragment is kept (it is never sent).
///
/// A local helper until the library offers a shared one.
enum URLRedaction {
    /// Fragments of parameter names that mark a secret, compared lowercased.
    static let secretNameFragments = [
        "sig", "token", "key", "secret", "password", "passwd", "pwd", "auth", "credential", "session",
    ]

    /// The URL text with its userinfo removed and its secret query values replaced.
    static func redact(_ url: String) -> String {
        var text = Substring(url)
        var result = ""
        if let schemeEnd = text.range(of: "://") {
            result += text[..<schemeEnd.upperBound]
            text = text[schemeEnd.upperBound...]
            let authorityEnd = text.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) ?? text.endIndex
            let authority = text[..<authorityEnd]
            if let at = authority.lastIndex(of: "@") {
                result += authority[authority.index(after: at)...]
            } else {
                result += authority
            }
            text = text[authorityEnd...]
        }
        guard let queryStart = text.firstIndex(of: "?") else { return result + text }
        result += text[...queryStart]
        let afterQuery = text[text.index(after: queryStart)...]
        let queryEnd = afterQuery.firstIndex(of: "#") ?? afterQuery.endIndex
        let parameters = afterQuery[..<queryEnd].split(separator: "&", omittingEmptySubsequences: false)
        result += parameters.map(redactParameter).joined(separator: "&")
        result += afterQuery[queryEnd...]
        return result
    }

    private static func redactParameter(_ parameter: Substring) -> String {
        guard let equals = parameter.firstIndex(of: "=") else { return String(parameter) }
        let name = parameter[..<equals]
        let lowered = name.lowercased()
        guard secretNameFragments.contains(where: { lowered.contains($0) }) else { return String(parameter) }
        return name + "=REDACTED"
    }
}

extension Substring {
    /// The range of the first occurrence of `needle`, without Foundation.
    fileprivate func range(of needle: String) -> Range<Index>? {
        var start = startIndex
        while start < endIndex {
            if self[start...].hasPrefix(needle) {
                return start..<index(start, offsetBy: needle.count)
            }
            start = index(after: start)
        }
        return nil
    }
}
