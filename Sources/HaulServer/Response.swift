/// Builders for response heads and small complete responses.
enum Response {
    /// The fixed `Last-Modified` of every generated body.
    static let lastModified = "Mon, 01 Jan 2024 00:00:00 GMT"

    /// `HTTP/1.1 STATUS Reason` and the fields, ending with the blank line.
    static func head(status: Int, headers: [(String, String)]) -> String {
        var text = "HTTP/1.1 \(status) \(reason(status))\r\n"
        for (name, value) in headers { text += "\(name): \(value)\r\n" }
        return text + "\r\n"
    }

    /// A complete response with a `text/plain` body and `Content-Length`.
    static func simple(status: Int, body: String, close: Bool, headers: [(String, String)] = [],
                       includeBody: Bool = true) -> String {
        guard allowsBody(status) else {
            return head(status: status, headers: headers + (close ? [("Connection", "close")] : []))
        }
        var fields: [(String, String)] = [
            ("Content-Type", "text/plain; charset=utf-8"),
            ("Content-Length", "\(body.utf8.count)"),
        ]
        fields += headers
        if close { fields.append(("Connection", "close")) }
        return head(status: status, headers: fields) + (includeBody ? body : "")
    }

    /// Whether a response with `status` may carry a body (not 1xx, 204 or 304).
    static func allowsBody(_ status: Int) -> Bool {
        status >= 200 && status != 204 && status != 304
    }

    /// A short HTML error page for `status`.
    static func errorPage(status: Int) -> String {
        "<html><head><title>\(status) \(reason(status))</title></head><body><h1>\(status) \(reason(status))</h1></body></html>\n"
    }

    /// The reason phrase for `status` (empty for unknown codes).
    static func reason(_ status: Int) -> String {
        switch status {
        case 100: "Continue"
        case 200: "OK"
        case 201: "Created"
        case 204: "No Content"
        case 206: "Partial Content"
        case 301: "Moved Permanently"
        case 302: "Found"
        case 303: "See Other"
        case 304: "Not Modified"
        case 307: "Temporary Redirect"
        case 308: "Permanent Redirect"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 407: "Proxy Authentication Required"
        case 408: "Request Timeout"
        case 410: "Gone"
        case 412: "Precondition Failed"
        case 416: "Range Not Satisfiable"
        case 429: "Too Many Requests"
        case 431: "Request Header Fields Too Large"
        case 500: "Internal Server Error"
        case 501: "Not Implemented"
        case 502: "Bad Gateway"
        case 503: "Service Unavailable"
        case 504: "Gateway Timeout"
        default: ""
        }
    }
}
