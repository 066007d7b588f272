import HaulCore
/// The request methods Haul sends.
package enum HTTPMethod: String, Sendable {
    case get = "GET"
    case head = "HEAD"
}

/// A `Range: bytes=first-` or `bytes=first-last` request (both ends inclusive).
package struct ByteRangeRequest: Sendable, Equatable {
    /// The first byte offset wanted.
    package var first: Int64
    /// The last byte offset wanted (inclusive), `nil` for "to the end".
    package var last: Int64?

    package init(first: Int64, last: Int64?) {
        self.first = first
        self.last = last
    }

    /// The `Range` header value.
    package var headerValue: String { "bytes=\(first)-" + (last.map(String.init) ?? "") }
}

/// The method, target and header fields of one request.
package struct RequestHead: Sendable {
    /// `GET` or `HEAD`.
    package var method: HTTPMethod
    /// Path and query, as in the request line.
    package var target: String
    /// The header fields, in the order they are sent.
    package var headers: HTTPHeaders

    /// Header names a user header may not set: Haul owns them.
    private static let reservedNames = [
        "host", "range", "if-range", "content-length", "transfer-encoding", "connection", "accept-encoding",
    ]

    /// Builds the request head for a URL.
    ///
    /// Always sends `Host`, `User-Agent` (a user header may override it), `Accept: */*` (likewise),
    /// `Accept-Encoding: identity`, `Range`/`If-Range` when asked, and `Authorization`: the
    /// `authorization` value when given, else `Basic ...` from the URL's userinfo when
    /// `sendUserinfo` is set and the URL has a user (a user `Authorization` header wins over
    /// both). `cookie` is sent as `Cookie` (after the user's `Cookie` value, in the same field).
    /// To a forwarding proxy (`absoluteForm`), the target is the whole URL without userinfo or
    /// fragment, and `proxyAuthorization` replaces any user `Proxy-Authorization`. User values
    /// for Host, Range, If-Range, Content-Length, Transfer-Encoding, Connection and
    /// Accept-Encoding are dropped.
    ///
    /// - Parameters:
    ///   - method: `GET` or `HEAD`.
    ///   - url: the URL to request.
    ///   - userAgent: the default `User-Agent` value.
    ///   - userHeaders: headers the user asked for, in order.
    ///   - sendUserinfo: whether the URL's user and password may be sent (original origin only).
    ///   - range: the byte range to ask for.
    ///   - ifRange: the validator (ETag or date) for `If-Range`.
    ///   - authorization: the `Authorization` value chosen for this hop (`-u`, netrc).
    ///   - cookie: the `Cookie` value of the cookies that match this URL.
    ///   - proxyAuthorization: the forwarding proxy's `Proxy-Authorization` value.
    ///   - absoluteForm: whether the request goes to a forwarding proxy.
    /// - Returns: the head.
    /// - Throws: `.invalidArgument` when a header name is not a token, a value contains CR, LF
    ///   or NUL, or the range is empty or negative.
    package static func make(
        method: HTTPMethod, url: HTTPURL, userAgent: String, userHeaders: [(name: String, value: String)],
        sendUserinfo: Bool, range: ByteRangeRequest?, ifRange: String?, authorization: String? = nil,
        cookie: String? = nil, proxyAuthorization: String? = nil, absoluteForm: Bool = false
    ) throws(HTTPClientError) -> RequestHead {
        for header in userHeaders {
            try validate(name: header.name, value: header.value)
        }
        try validate(name: "User-Agent", value: userAgent)
        if let ifRange { try validate(name: "If-Range", value: ifRange) }
        for (name, value) in [("Authorization", authorization), ("Cookie", cookie), ("Proxy-Authorization", proxyAuthorization)] {
            if let value { try validate(name: name, value: value) }
        }
        if let range, range.first < 0 || (range.last.map { $0 < range.first } ?? false) {
            throw HTTPClientError(.invalidRequest, "invalid byte range \(range.first)-\(range.last.map(String.init) ?? "")")
        }
        let kept = userHeaders.filter { header in
            !reservedNames.contains { header.name.asciiCaseInsensitiveEquals($0) }
                && !(proxyAuthorization != nil && header.name.asciiCaseInsensitiveEquals("proxy-authorization"))
        }
        func userValue(_ name: String) -> String? {
            kept.first { $0.name.asciiCaseInsensitiveEquals(name) }?.value
        }

        var headers = HTTPHeaders()
        headers.reserveCapacity(7 + kept.count)
        headers.add(name: "Host", value: url.hostHeader)
        headers.add(name: "User-Agent", value: userValue("User-Agent") ?? userAgent)
        headers.add(name: "Accept", value: userValue("Accept") ?? "*/*")
        headers.add(name: "Accept-Encoding", value: "identity")
        if userValue("Authorization") == nil {
            if let authorization {
                headers.add(name: "Authorization", value: authorization)
            } else if sendUserinfo, let user = url.user {
                headers.add(name: "Authorization", value: BasicCredentials(user: user, password: url.password ?? "").authorization)
            }
        }
        if let proxyAuthorization { headers.add(name: "Proxy-Authorization", value: proxyAuthorization) }
        if let cookie {
            headers.add(name: "Cookie", value: userValue("Cookie").map { $0 + "; " + cookie } ?? cookie)
        }
        if let range {
            headers.add(name: "Range", value: range.headerValue)
            if let ifRange { headers.add(name: "If-Range", value: ifRange) }
        }
        for header in kept where !headers.contains(header.name) || isRepeatable(header.name) {
            headers.add(name: header.name, value: header.value)
        }
        return RequestHead(method: method, target: absoluteForm ? url.stringWithoutUserinfo : url.target, headers: headers)
    }

    /// The request line and header block, ready to write.
    package func serialized() -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(256)
        bytes.appendUTF8(method.rawValue)
        bytes.append(UInt8(ascii: " "))
        bytes.appendUTF8(target)
        bytes.appendUTF8(" HTTP/1.1\r\n")
        for field in headers {
            bytes.appendUTF8(field.name)
            bytes.append(UInt8(ascii: ":"))
            bytes.append(UInt8(ascii: " "))
            bytes.appendUTF8(field.value)
            bytes.append(0x0D)
            bytes.append(0x0A)
        }
        bytes.append(0x0D)
        bytes.append(0x0A)
        return bytes
    }

    /// Fields Haul may already have set from the user's value (sent once) versus any other.
    private static func isRepeatable(_ name: String) -> Bool {
        !["user-agent", "accept", "authorization", "cookie", "proxy-authorization"].contains { name.asciiCaseInsensitiveEquals($0) }
    }

    private static func validate(name: String, value: String) throws(HTTPClientError) {
        guard !name.isEmpty, name.utf8.allSatisfy(isTokenByte) else {
            throw HTTPClientError(.invalidRequest, "invalid header name '\(quotedForMessage(name))' (letters, digits and !#$%&'*+-.^_`|~ only)")
        }
        guard !value.utf8.contains(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0x00 }) else {
            throw HTTPClientError(.invalidRequest, "the value of header '\(name)' contains CR, LF or NUL")
        }
    }
}

/// Whether a byte may appear in an HTTP token (RFC 9110 §5.6.2 `tchar`).
package func isTokenByte(_ byte: UInt8) -> Bool {
    // A `switch`, not a search of the list: every byte of every field name goes through here.
    switch byte {
    case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
        return true
    case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"), UInt8(ascii: "'"),
         UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "^"), UInt8(ascii: "_"),
         UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
        return true
    default:
        return false
    }
}
