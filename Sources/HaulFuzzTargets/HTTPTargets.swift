import HaulHTTP

/// Targets for the parsers of `HaulHTTP`.
enum HTTPTargets {
    /// A response head, fed in pieces whose sizes the input's first byte picks: the parser ends in
    /// a head, an error or a wish for more, never past the input, never looping.
    static func responseHead(_ data: UnsafeRawBufferPointer) {
        var parser = ResponseParser(method: .get)
        _ = drive(&parser, data, pieceSize: Int(data.first ?? 0) % 64 + 1, stopAtHead: true)
    }

    /// A chunked body behind a fixed head: every body range lies inside the input it came from,
    /// and the body is never longer than the input.
    static func chunkedBody(_ data: UnsafeRawBufferPointer) {
        var parser = ResponseParser(method: .get)
        let head = Array("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n".utf8)
        let whole = head + Array(data)
        whole.withUnsafeBytes { bytes in
            let body = drive(&parser, bytes, pieceSize: Int(data.first ?? 0) % 97 + 1, stopAtHead: false)
            FuzzTargets.require(body <= data.count, "a body of \(body) bytes from \(data.count)")
        }
    }

    /// Feeds `data` in pieces; returns the body bytes seen. Each piece is consumed or refused.
    private static func drive(_ parser: inout ResponseParser, _ data: UnsafeRawBufferPointer, pieceSize: Int,
                              stopAtHead: Bool) -> Int {
        var body = 0
        var start = 0
        while start < data.count {
            let piece = UnsafeRawBufferPointer(rebasing: data[start..<min(data.count, start + pieceSize)])
            var offset = 0
            var steps = 0
            while true {
                steps += 1
                FuzzTargets.require(steps <= piece.count + 2, "the parser loops on a piece of \(piece.count) bytes")
                guard let event = try? parser.parse(piece, offset: &offset) else { return body }
                FuzzTargets.require(offset <= piece.count, "offset \(offset) past a piece of \(piece.count)")
                switch event {
                case .needMore: break
                case .head: if stopAtHead { return body }; continue
                case .body(let range):
                    FuzzTargets.require(range.lowerBound >= 0 && range.upperBound <= piece.count, "a body range outside the piece")
                    body += range.count
                    continue
                case .end: return body
                }
                break
            }
            start += pieceSize
        }
        _ = try? parser.inputEnded()
        return body
    }

    /// A URL: a parse prints as text that parses again to the same URL.
    static func url(_ data: UnsafeRawBufferPointer) {
        guard let text = String(validating: data, as: UTF8.self), let url = try? HTTPURL.parse(text) else { return }
        let printed = url.stringWithoutUserinfo
        guard let again = try? HTTPURL.parse(printed) else {
            FuzzTargets.require(false, "'\(printed)' (from a parsed URL) does not parse")
            return
        }
        FuzzTargets.require(again.stringWithoutUserinfo == printed, "'\(printed)' prints as '\(again.stringWithoutUserinfo)'")
        let shown = url.description
        let authority = shown.split(separator: "/", maxSplits: 3, omittingEmptySubsequences: false).dropFirst(2).first ?? ""
        FuzzTargets.require(!authority.contains("@"), "'\(shown)' shows its userinfo")
    }

    /// A `Retry-After` value: no delay, or a delay that is not negative.
    static func retryAfter(_ data: UnsafeRawBufferPointer) {
        let text = String(decoding: data, as: UTF8.self)
        if let delay = RetryAfter.delay(text, now: 1_800_000_000) {
            FuzzTargets.require(delay >= .zero, "a negative delay for '\(text)'")
        }
    }

    /// A netrc file: parsing never fails, and an entry found for a host has a login.
    static func netrc(_ data: UnsafeRawBufferPointer) {
        let netrc = Netrc(parsing: String(decoding: data, as: UTF8.self))
        for host in ["example.com", "default", "", "machine"] {
            _ = netrc.credentials(forHost: host)
        }
    }

    /// A cookies.txt: parsing never fails; a Cookie header holds no CR, LF or NUL.
    static func cookies(_ data: UnsafeRawBufferPointer) {
        let jar = CookieJar(parsing: String(decoding: data, as: UTF8.self), now: 1_800_000_000)
        for text in ["https://example.com/a/b", "http://127.0.0.1:8080/", "https://sub.example.com/"] {
            guard let url = try? HTTPURL.parse(text), let header = jar.header(for: url) else { continue }
            FuzzTargets.require(!header.utf8.contains { $0 == 13 || $0 == 10 || $0 == 0 }, "a Cookie header with a control byte")
        }
    }

    /// A SOCKS5 server's answers: the handshake asks for at most what a reply can hold, and ends
    /// (done or failed) or waits; it never accepts more than it asked for.
    static func socks5Reply(_ data: UnsafeRawBufferPointer) {
        guard var handshake = try? SOCKS5Handshake(target: .name("example.com"), port: 443, user: "user", password: "secret",
                                                   proxy: "socks5h://127.0.0.1:1080") else { return }
        var rest = data[...]
        while true {
            let wanted = handshake.bytesWanted
            FuzzTargets.require(wanted <= 262, "the handshake wants \(wanted) bytes")
            guard wanted > 0, !rest.isEmpty else { return }
            let taken = rest.prefix(wanted)
            rest = rest.dropFirst(taken.count)
            switch handshake.received(Array(taken)) {
            case .needMore, .send: continue
            case .done, .failed: return
            }
        }
    }

    /// `Link` fields, one per line, from an https response (or http when the first byte is odd):
    /// the parser reads at most its bound of links; the mirrors stay within their cap, none is
    /// http under https, none is the response itself or carries a user, none repeats.
    static func linkHeader(_ data: UnsafeRawBufferPointer) {
        let secure = (data.first ?? 0) & 1 == 0
        guard let response = try? HTTPURL.parse(secure ? "https://example.com/dir/file.iso" : "http://example.com/dir/file.iso")
        else { return }
        let fields = data.split(separator: 0x0A, omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
        let header = LinkHeader(fieldValues: fields, base: response)
        FuzzTargets.require(header.links.count + header.skipped.count <= LinkHeader.maximumLinkCount, "more links than the bound")
        let links = DuplicateLinks(header, responseURL: response)
        FuzzTargets.require(links.mirrors.count <= DuplicateLinks.maximumMirrorCount, "\(links.mirrors.count) mirrors")
        FuzzTargets.require(Set(links.mirrors.map(\.url)).count == links.mirrors.count, "a mirror repeats")
        for url in links.mirrors.map(\.url) + (links.metalink.map { [$0] } ?? []) {
            FuzzTargets.require(!secure || url.scheme == .https, "\(url) under an https response")
            FuzzTargets.require(url.user == nil && url.password == nil, "\(url) keeps a user")
        }
        FuzzTargets.require(!links.mirrors.contains { $0.url == response }, "the response is its own mirror")
        FuzzTargets.require(!links.dropped.contains { $0.description.utf8.contains { $0 < 0x20 } }, "a reason with a control byte")
    }
}
