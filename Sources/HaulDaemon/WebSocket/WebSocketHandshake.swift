import CHaulTLS

/// The server side of the WebSocket opening handshake (RFC 6455 section 4.2): a pure check of
/// the request head, and the `101` response.
public enum WebSocketHandshake {
    /// The GUID RFC 6455 appends to the key.
    static let guid = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

    /// Whether the head asks to upgrade to WebSocket at all (`Upgrade: websocket`).
    public static func isUpgrade(_ head: HTTPRequestHead) -> Bool {
        head.hasToken("websocket", in: "Upgrade")
    }

    /// The response to an upgrade request: `101` with the accept key, or the error to send.
    ///
    /// Requires `GET`, HTTP/1.1, `Upgrade: websocket`, `Connection: Upgrade`,
    /// `Sec-WebSocket-Version: 13` (else `426` naming it) and a `Sec-WebSocket-Key` that is the
    /// base64 of 16 bytes.
    public static func response(to head: HTTPRequestHead) -> HTTPResponse {
        guard head.method == "GET", head.minorVersion == 1, isUpgrade(head), head.hasToken("upgrade", in: "Connection") else {
            return .text(400, "not a WebSocket upgrade request")
        }
        guard head.values("Sec-WebSocket-Version") == ["13"] else {
            return .text(426, "WebSocket version 13 only", fields: [.init("Sec-WebSocket-Version", "13")])
        }
        let keys = head.values("Sec-WebSocket-Key")
        guard keys.count == 1, let key = keys.first, Base64Text.decode(key)?.count == 16 else {
            return .text(400, "missing or malformed Sec-WebSocket-Key")
        }
        var response = HTTPResponse(status: 101)
        response.fields = [.init("Upgrade", "websocket"), .init("Connection", "Upgrade"),
                           .init("Sec-WebSocket-Accept", acceptKey(for: key))]
        return response
    }

    /// `base64(SHA-1(key + GUID))`.
    public static func acceptKey(for key: String) -> String {
        let input = Array((key + guid).utf8)
        var digest = [UInt8](repeating: 0, count: 20)
        _ = haul_digest_once(Int32(HAUL_DIGEST_SHA1), input, input.count, &digest)
        return Base64Text.encode(digest)
    }
}

/// Standard base64 (RFC 4648), padded.
enum Base64Text {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    /// The base64 text of `bytes`.
    static func encode(_ bytes: [UInt8]) -> String {
        var text: [UInt8] = []
        text.reserveCapacity((bytes.count + 2) / 3 * 4)
        var index = 0
        while index < bytes.count {
            let chunk = bytes[index..<min(index + 3, bytes.count)]
            let value = chunk.enumerated().reduce(UInt32(0)) { $0 | UInt32($1.element) << (16 - 8 * UInt32($1.offset)) }
            for position in 0..<4 {
                text.append(position <= chunk.count ? alphabet[Int(value >> (18 - 6 * UInt32(position)) & 0x3F)] : UInt8(ascii: "="))
            }
            index += 3
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// The bytes of padded base64 `text`, or `nil` when it is not canonical base64.
    static func decode(_ text: String) -> [UInt8]? {
        let utf8 = Array(text.utf8)
        guard utf8.count % 4 == 0 else { return nil }
        var bytes: [UInt8] = []
        var index = 0
        while index < utf8.count {
            var value: UInt32 = 0
            var padding = 0
            for position in 0..<4 {
                let character = utf8[index + position]
                if character == UInt8(ascii: "=") {
                    guard index + 4 == utf8.count, position >= 2 else { return nil }
                    padding += 1
                    value <<= 6
                    continue
                }
                guard padding == 0, let digit = alphabet.firstIndex(of: character) else { return nil }
                value = value << 6 | UInt32(digit)
            }
            let decoded = [UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
            bytes.append(contentsOf: decoded.prefix(3 - padding))
            index += 4
        }
        guard encode(bytes) == text else { return nil }   // canonical: no stray bits
        return bytes
    }
}
