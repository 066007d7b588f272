/// Reads a client's WebSocket frames from bytes that arrive in pieces: a pure state machine.
///
/// ``feed(_:)`` takes the next bytes and returns the messages they complete: fragments are
/// joined, masks removed, text checked for UTF-8. Every rule of RFC 6455 a client can break is
/// a ``WebSocketError`` with the code to close with: an unmasked frame, a reserved bit or
/// opcode, a control frame that is fragmented or longer than 125 bytes, a continuation with no
/// message, a new message inside a fragmented one, a length in more bytes than it needs or with
/// the top bit set (1002); a message longer than ``maximumMessageBytes``, refused from its
/// header before its payload is read (1009); invalid UTF-8 in a text message or close reason
/// (1007); a close frame of one byte or with a code that may not be sent (1002). After an error
/// or a close frame, the parser takes nothing more.
public struct WebSocketFrameParser: Sendable {
    /// The longest message accepted (all its fragments together).
    public let maximumMessageBytes: Int
    private var buffer: [UInt8] = []
    private var message: (opcode: UInt8, payload: [UInt8])?
    private var finished = false

    /// Creates a parser.
    ///
    /// - Parameter maximumMessageBytes: the longest message accepted (default 2 MiB).
    public init(maximumMessageBytes: Int = 2 << 20) {
        self.maximumMessageBytes = maximumMessageBytes
    }

    /// Takes the next bytes from the peer; returns the messages they complete, in order.
    ///
    /// - Throws: ``WebSocketError`` at the first violation (nothing more is taken after it).
    public mutating func feed(_ bytes: some Collection<UInt8>) throws(WebSocketError) -> [WebSocketMessage] {
        guard !finished else { return [] }
        buffer.append(contentsOf: bytes)
        var messages: [WebSocketMessage] = []
        var offset = 0
        defer { buffer.removeFirst(min(offset, buffer.count)) }
        do throws(WebSocketError) {
            while let (header, length) = try frameHeader(at: offset) {
                guard buffer.count - offset >= header.size + length else { break }
                let start = offset + header.size
                var payload = Array(buffer[start..<(start + length)])
                for index in payload.indices { payload[index] ^= header.mask[index & 3] }
                offset = start + length
                if let complete = try take(header, payload) {
                    messages.append(complete)
                    if case .close = complete {
                        finished = true
                        break
                    }
                }
            }
        } catch {
            finished = true
            throw error
        }
        return messages
    }

    private struct Header {
        var final: Bool
        var opcode: UInt8
        var mask: [UInt8]
        var size: Int
    }

    /// The header of the frame at `offset` and its payload length, once all of the header is
    /// here; checks every rule the header alone can break.
    private func frameHeader(at offset: Int) throws(WebSocketError) -> (Header, Int)? {
        let available = buffer.count - offset
        guard available >= 2 else { return nil }
        let first = buffer[offset], second = buffer[offset + 1]
        guard first & 0x70 == 0 else { throw WebSocketError(closeCode: 1002, reason: "reserved bits set") }
        let opcode = first & 0x0F, final = first & 0x80 != 0
        guard [0x0, 0x1, 0x2, 0x8, 0x9, 0xA].contains(opcode) else {
            throw WebSocketError(closeCode: 1002, reason: "reserved opcode \(opcode)")
        }
        guard second & 0x80 != 0 else { throw WebSocketError(closeCode: 1002, reason: "a client frame must be masked") }
        var length = Int(second & 0x7F)
        var size = 2
        if length == 126 {
            guard available >= 4 else { return nil }
            length = Int(buffer[offset + 2]) << 8 | Int(buffer[offset + 3])
            guard length >= 126 else { throw WebSocketError(closeCode: 1002, reason: "length not minimally encoded") }
            size = 4
        } else if length == 127 {
            guard available >= 10 else { return nil }
            var value: UInt64 = 0
            for index in 2..<10 { value = value << 8 | UInt64(buffer[offset + index]) }
            guard value >> 63 == 0, value > 0xFFFF else { throw WebSocketError(closeCode: 1002, reason: "invalid 64-bit length") }
            guard value <= UInt64(maximumMessageBytes) else { throw WebSocketError(closeCode: 1009, reason: "message too big") }
            length = Int(value)
            size = 10
        }
        if opcode >= 0x8 {
            guard final, length <= 125 else {
                throw WebSocketError(closeCode: 1002, reason: "a control frame must be final and at most 125 bytes")
            }
        } else {
            if opcode == 0, message == nil { throw WebSocketError(closeCode: 1002, reason: "continuation without a message") }
            if opcode != 0, message != nil { throw WebSocketError(closeCode: 1002, reason: "a new message inside a fragmented one") }
            if (message?.payload.count ?? 0) + length > maximumMessageBytes {
                throw WebSocketError(closeCode: 1009, reason: "message too big")
            }
        }
        guard available >= size + 4 else { return nil }
        let mask = Array(buffer[(offset + size)..<(offset + size + 4)])
        return (Header(final: final, opcode: opcode, mask: mask, size: size + 4), length)
    }

    /// A frame's payload (unmasked): a control message, or a message once its last fragment came.
    private mutating func take(_ header: Header, _ payload: [UInt8]) throws(WebSocketError) -> WebSocketMessage? {
        switch header.opcode {
        case 0x8: return try Self.close(payload)
        case 0x9: return .ping(payload)
        case 0xA: return .pong(payload)
        default: break
        }
        var current = message ?? (header.opcode, [])
        current.payload += payload
        guard header.final else {
            message = current
            return nil
        }
        message = nil
        guard current.opcode == 0x1 else { return .binary(current.payload) }
        guard let text = Self.utf8(current.payload) else { throw WebSocketError(closeCode: 1007, reason: "invalid UTF-8 in a text message") }
        return .text(text)
    }

    private static func close(_ payload: [UInt8]) throws(WebSocketError) -> WebSocketMessage {
        if payload.isEmpty { return .close(code: nil, reason: "") }
        guard payload.count >= 2 else { throw WebSocketError(closeCode: 1002, reason: "a close frame of one byte") }
        let code = UInt16(payload[0]) << 8 | UInt16(payload[1])
        let sendable = (1000...1003).contains(code) || (1007...1011).contains(code) || (3000...4999).contains(code)
        guard sendable else { throw WebSocketError(closeCode: 1002, reason: "close code \(code) may not be sent") }
        guard let reason = utf8(Array(payload.dropFirst(2))) else {
            throw WebSocketError(closeCode: 1007, reason: "invalid UTF-8 in a close reason")
        }
        return .close(code: code, reason: reason)
    }

    /// The text of `bytes` when they are valid UTF-8.
    static func utf8(_ bytes: [UInt8]) -> String? {
        var decoder = UTF8()
        var iterator = bytes.makeIterator()
        var scalars = String.UnicodeScalarView()
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue(let scalar): scalars.append(scalar)
            case .emptyInput: return String(scalars)
            case .error: return nil
            }
        }
    }
}
