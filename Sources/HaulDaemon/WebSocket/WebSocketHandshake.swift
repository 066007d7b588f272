import HaulCrypto
import HaulCore

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
        guard keys.count == 1, let key = keys.first, Base64.decode(key.utf8, padding: .required)?.count == 16 else {
            return .text(400, "missing or malformed Sec-WebSocket-Key")
        }
        var response = HTTPResponse(status: 101)
        response.fields = [.init("Upgrade", "websocket"), .init("Connection", "Upgrade"),
                           .init("Sec-WebSocket-Accept", acceptKey(for: key))]
        return response
    }

    /// `base64(SHA-1(key + GUID))`.
    public static func acceptKey(for key: String) -> String {
        Base64.encode(Digest.hash(.sha1, Array((key + guid).utf8)))
    }
}
