/// What a WebSocket peer said, once its frames are put together.
public enum WebSocketMessage: Sendable, Equatable {
    /// A text message (valid UTF-8).
    case text(String)
    /// A binary message.
    case binary([UInt8])
    /// A ping, with its application data (to be answered with a pong carrying the same).
    case ping([UInt8])
    /// A pong.
    case pong([UInt8])
    /// A close frame: its status code, if it carried one, and its reason.
    case close(code: UInt16?, reason: String)
}

/// A violation of RFC 6455 by the peer, with the status code to close with.
public struct WebSocketError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The close code: 1002 protocol error, 1007 invalid UTF-8, 1009 message too big.
    public var closeCode: UInt16
    /// What is wrong.
    public var reason: String

    /// `closeCode reason`.
    public var description: String { "\(closeCode) \(reason)" }
}

/// Server-to-client frames (unmasked, as RFC 6455 requires of a server).
public enum WebSocketFrame {
    /// Frame opcodes.
    public enum Opcode: UInt8, Sendable {
        /// A continuation of a fragmented message.
        case continuation = 0x0
        /// The first frame of a text message.
        case text = 0x1
        /// The first frame of a binary message.
        case binary = 0x2
        /// A close frame.
        case close = 0x8
        /// A ping.
        case ping = 0x9
        /// A pong.
        case pong = 0xA
    }

    /// One final, unmasked frame carrying `payload`.
    public static func encode(_ opcode: Opcode, _ payload: some Collection<UInt8>) -> [UInt8] {
        var frame: [UInt8] = [0x80 | opcode.rawValue]
        let count = payload.count
        if count < 126 {
            frame.append(UInt8(count))
        } else if count <= 0xFFFF {
            frame += [126, UInt8(count >> 8), UInt8(count & 0xFF)]
        } else {
            frame.append(127)
            for shift in stride(from: 56, through: 0, by: -8) { frame.append(UInt8(UInt64(count) >> UInt64(shift) & 0xFF)) }
        }
        frame.append(contentsOf: payload)
        return frame
    }

    /// A close frame with a status code and a reason (cut to fit the 125-byte control limit).
    public static func close(code: UInt16, reason: String = "") -> [UInt8] {
        encode(.close, [UInt8(code >> 8), UInt8(code & 0xFF)] + Array(reason.utf8.prefix(123)))
    }
}
