import HaulTestSupport
import Testing
@testable import HaulDaemon

/// RFC 6455 without sockets: the handshake, the frame parser's every rule, and the encoder.
@Suite struct WebSocketTests {
    /// A client frame: masked with a fixed key.
    static func frame(_ opcode: UInt8, _ payload: [UInt8], final: Bool = true, masked: Bool = true, rsv: UInt8 = 0) -> [UInt8] {
        var bytes: [UInt8] = [(final ? 0x80 : 0) | rsv | opcode]
        let mask: UInt8 = masked ? 0x80 : 0
        if payload.count < 126 {
            bytes.append(mask | UInt8(payload.count))
        } else if payload.count <= 0xFFFF {
            bytes += [mask | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        } else {
            bytes.append(mask | 127)
            for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(UInt64(payload.count) >> UInt64(shift) & 0xFF)) }
        }
        let key: [UInt8] = [0x37, 0xFA, 0x21, 0x3D]
        if masked { bytes += key }
        bytes += payload.enumerated().map { masked ? $0.element ^ key[$0.offset & 3] : $0.element }
        return bytes
    }

    static func feed(_ bytes: [UInt8], limit: Int = 1 << 20) throws(WebSocketError) -> [WebSocketMessage] {
        var parser = WebSocketFrameParser(maximumMessageBytes: limit)
        return try parser.feed(bytes)
    }

    static func closeCode(_ bytes: [UInt8], limit: Int = 1 << 20) -> UInt16? {
        do throws(WebSocketError) {
            _ = try feed(bytes, limit: limit)
            return nil
        } catch {
            return error.closeCode
        }
    }

    @Test func theHandshakeAnswersWithRFC6455sAcceptKey() {
        #expect(WebSocketHandshake.acceptKey(for: "dGhlIHNhbXBsZSBub25jZQ==") == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
        let head = HTTPRequestHead(method: "GET", target: "/jsonrpc", fields: [
            ("Host", "127.0.0.1:6800"), ("Upgrade", "websocket"), ("Connection", "keep-alive, Upgrade"),
            ("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="), ("Sec-WebSocket-Version", "13"),
        ])
        let response = WebSocketHandshake.response(to: head)
        #expect(response.status == 101)
        #expect(response.fields.contains(.init("Sec-WebSocket-Accept", "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")))
        var oldVersion = head
        oldVersion.fields[4].value = "8"
        #expect(WebSocketHandshake.response(to: oldVersion).status == 426)
        var badKey = head
        badKey.fields[3].value = "c2hvcnQ="
        #expect(WebSocketHandshake.response(to: badKey).status == 400)
        var post = head
        post.method = "POST"
        #expect(WebSocketHandshake.response(to: post).status == 400)
    }

    @Test func messagesComeWholeAcrossFragmentsAndPieces() throws {
        let text = Array("{\"a\":\"é\"}".utf8)
        let bytes = Self.frame(0x1, Array(text[..<3]), final: false) + Self.frame(0x9, [1, 2]) + Self.frame(0x0, Array(text[3...]))
            + Self.frame(0x2, [9, 9]) + Self.frame(0xA, [])
        #expect(try Self.feed(bytes) == [.ping([1, 2]), .text("{\"a\":\"é\"}"), .binary([9, 9]), .pong([])])
        var parser = WebSocketFrameParser()
        var messages: [WebSocketMessage] = []
        for byte in bytes { messages += try parser.feed([byte]) }
        #expect(messages == [.ping([1, 2]), .text("{\"a\":\"é\"}"), .binary([9, 9]), .pong([])])
    }

    @Test func longLengthsParse() throws {
        let medium = [UInt8](repeating: 0x41, count: 300), large = [UInt8](repeating: 0x42, count: 70_000)
        #expect(try Self.feed(Self.frame(0x1, medium) + Self.frame(0x2, large)) == [.text(String(repeating: "A", count: 300)), .binary(large)])
    }

    @Test func aCloseFrameEndsTheStream() throws {
        let bytes = Self.frame(0x8, [0x03, 0xE8] + Array("bye".utf8)) + Self.frame(0x1, Array("after".utf8))
        #expect(try Self.feed(bytes) == [.close(code: 1000, reason: "bye")])
        #expect(try Self.feed(Self.frame(0x8, [])) == [.close(code: nil, reason: "")])
    }

    /// Frames that break a rule, and the code to close with.
    static let violations: [([UInt8], UInt16)] = [
        (frame(0x1, Array("x".utf8), masked: false), 1002),       // unmasked
        (frame(0x1, [], rsv: 0x40), 1002),                                 // RSV1
        (frame(0x3, []), 1002),                                            // reserved opcode
        (frame(0xB, []), 1002),
        (frame(0x9, [UInt8](repeating: 0, count: 126)), 1002),             // control frame too long
        (frame(0x9, [], final: false), 1002),                              // fragmented control frame
        (frame(0x0, [1]), 1002),                                           // continuation without a message
        (frame(0x1, [1], final: false) + frame(0x1, [2]), 1002),           // a new message inside one
        (frame(0x1, [0xC3, 0x28]), 1007),                                  // invalid UTF-8
        (frame(0x1, [0xC3], final: false) + frame(0x0, [0x28]), 1007),
        (frame(0x8, [0x03]), 1002),                                        // close of one byte
        (frame(0x8, [0x03, 0xED]), 1002),                                  // 1005 may not be sent
        (frame(0x8, [0x03, 0xE8, 0xFF]), 1007),                            // invalid UTF-8 reason
        ([0x81, 0xFE, 0x00, 0x05, 0, 0, 0, 0], 1002),                      // 16-bit length under 126
        ([0x82, 0xFF, 0x80, 0, 0, 0, 0, 0, 0, 0], 1002),                   // 64-bit length with the top bit
    ]

    @Test(arguments: violations)
    func everyViolationClosesWithItsCode(bytes: [UInt8], code: UInt16) {
        #expect(Self.closeCode(bytes) == code)
    }

    @Test func aMessageOverTheLimitIsRefusedFromItsHeader() {
        // 2 GiB announced, no payload sent: refused at once, nothing buffered.
        let header: [UInt8] = [0x82, 0xFF, 0, 0, 0, 0, 0x80, 0, 0, 0, 1, 2, 3, 4]
        #expect(Self.closeCode(header, limit: 1 << 20) == 1009)
        let fragments = Self.frame(0x2, [UInt8](repeating: 0, count: 600), final: false) + Self.frame(0x0, [UInt8](repeating: 0, count: 600))
        #expect(Self.closeCode(fragments, limit: 1000) == 1009)
    }

    @Test func afterAnErrorNothingMoreIsTaken() throws {
        var parser = WebSocketFrameParser()
        #expect(throws: WebSocketError.self) { try parser.feed(Self.frame(0x3, [])) }
        #expect(try parser.feed(Self.frame(0x1, Array("x".utf8))) == [])
    }

    @Test func theEncoderUsesTheShortestLength() {
        #expect(WebSocketFrame.encode(.text, [UInt8](repeating: 0, count: 125)).prefix(2) == [0x81, 125])
        #expect(WebSocketFrame.encode(.text, [UInt8](repeating: 0, count: 126)).prefix(4) == [0x81, 126, 0, 126])
        #expect(WebSocketFrame.encode(.binary, [UInt8](repeating: 0, count: 65536)).prefix(10) == [0x82, 127, 0, 0, 0, 0, 0, 1, 0, 0])
        #expect(WebSocketFrame.close(code: 1001, reason: "x") == [0x88, 3, 0x03, 0xE9, 0x78])
    }

    @Test func randomBytesNeverTrap() {
        var generator = SplitMix64(seed: 1006)
        for _ in 0..<3000 {
            var parser = WebSocketFrameParser(maximumMessageBytes: 4096)
            let bytes = (0..<Int.random(in: 0..<64, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            _ = try? parser.feed(bytes)
        }
    }
}
