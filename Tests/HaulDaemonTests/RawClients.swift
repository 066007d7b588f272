import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Why a raw test client gave up.
struct RawError: Error, CustomStringConvertible {
    var description: String
}

/// An HTTP response as read off the wire.
struct RawResponse {
    var status: Int
    var head: String
    var body: String

    func field(_ name: String) -> String? {
        for line in head.split(separator: "\r\n") {
            let parts = line.split(separator: ":", maxSplits: 1)
            if parts.count == 2, parts[0].lowercased() == name.lowercased() { return parts[1].trimmingCharacters(in: .whitespaces) }
        }
        return nil
    }
}

/// A plain TCP connection to 127.0.0.1 that sends bytes and reads one response.
final class RawConnection {
    let fd: Int32

    /// How long a read waits for bytes before it gives up.
    let receiveTimeout: Int

    /// Connects to `port` on 127.0.0.1, from `source` (another loopback address) when given.
    init(port: Int, source: String? = nil, receiveTimeout: Int = 10) throws {
        self.receiveTimeout = receiveTimeout
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        if let source {
            var local = sockaddr_in()
            local.sin_family = sa_family_t(AF_INET)
            local.sin_addr.s_addr = inet_addr(source)
            let bound = withUnsafePointer(to: &local) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard bound == 0 else {
                close(fd)
                throw RawError(description: "cannot bind to \(source)")
            }
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            close(fd)
            throw RawError(description: "cannot connect to \(port)")
        }
        var timeout = timeval(tv_sec: receiveTimeout, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { close(fd) }

    func write(_ bytes: [UInt8]) throws {
        var sent = 0
        while sent < bytes.count {
            let count = bytes.withUnsafeBytes { send(fd, $0.baseAddress! + sent, bytes.count - sent, Int32(MSG_NOSIGNAL)) }
            guard count > 0 else { throw RawError(description: "send failed") }
            sent += count
        }
    }

    /// Up to `limit` bytes; empty at the end of the stream, or when nothing came within the receive timeout.
    func read(limit: Int = 65536) -> [UInt8] {
        (try? readOrThrow(limit: limit)) ?? []
    }

    /// Up to `limit` bytes; empty at the end of the stream; throws when nothing came within the receive timeout.
    func readOrThrow(limit: Int = 65536) throws -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: limit)
        let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, limit, 0) }
        if count < 0, errno == EAGAIN || errno == EWOULDBLOCK {
            throw RawError(description: "nothing came within \(receiveTimeout) s")
        }
        return count > 0 ? Array(buffer.prefix(count)) : []
    }

    /// Sends `bytes` and reads one response (its head, then `Content-Length` bytes).
    func exchange(_ bytes: [UInt8]) throws -> RawResponse {
        try write(bytes)
        var received: [UInt8] = []
        while true {
            let text = String(decoding: received, as: UTF8.self)
            if let end = text.range(of: "\r\n\r\n") {
                let head = String(text[..<end.lowerBound])
                let length = head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("content-length:") }
                    .flatMap { Int($0.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) } ?? 0
                let bodyStart = text.utf8.distance(from: text.startIndex, to: end.upperBound)
                if received.count - bodyStart >= length {
                    let status = Int(head.split(separator: " ")[1]) ?? 0
                    return RawResponse(status: status, head: head,
                                       body: String(decoding: received[bodyStart..<(bodyStart + length)], as: UTF8.self))
                }
            }
            let more = try readOrThrow()
            guard !more.isEmpty else { throw RawError(description: "the connection ended: \(text)") }
            received += more
        }
    }
}

/// A frame as the test client reads it.
struct RawFrame: Equatable {
    var opcode: UInt8
    var payload: [UInt8]
}

/// A minimal WebSocket client: the handshake, masked frames out, frames in.
final class RawWebSocket {
    let connection: RawConnection
    private var pending: [UInt8] = []

    init(port: Int, origin: String? = nil) throws {
        connection = try RawConnection(port: port)
        var head = "GET /jsonrpc HTTP/1.1\r\nHost: localhost:\(port)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
        if let origin { head += "Origin: \(origin)\r\n" }
        try connection.write(Array((head + "\r\n").utf8))
        while true {
            let text = String(decoding: pending, as: UTF8.self)
            if let end = text.range(of: "\r\n\r\n") {
                guard text.hasPrefix("HTTP/1.1 101") else { throw RawError(description: text) }
                pending.removeFirst(text.utf8.distance(from: text.startIndex, to: end.upperBound))
                return
            }
            let more = connection.read()
            guard !more.isEmpty else { throw RawError(description: "closed during the handshake") }
            pending += more
        }
    }

    func sendRaw(_ bytes: [UInt8]) throws { try connection.write(bytes) }

    func send(opcode: UInt8, _ payload: [UInt8]) throws {
        try connection.write(Self.frame(opcode: opcode, payload))
    }

    /// A masked frame.
    static func frame(opcode: UInt8, _ payload: [UInt8]) -> [UInt8] {
        var frame: [UInt8] = [0x80 | opcode]
        if payload.count < 126 {
            frame.append(0x80 | UInt8(payload.count))
        } else {
            frame += [0x80 | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        }
        let key: [UInt8] = [1, 2, 3, 4]
        frame += key
        frame += payload.enumerated().map { $0.element ^ key[$0.offset & 3] }
        return frame
    }

    func send(text: String) throws { try send(opcode: 0x1, Array(text.utf8)) }

    /// The next frame, waiting at most `timeout` seconds for it.
    func receive(timeout: Int = 10) throws -> RawFrame {
        var deadline = timeval(tv_sec: timeout, tv_usec: 0)
        setsockopt(connection.fd, SOL_SOCKET, SO_RCVTIMEO, &deadline, socklen_t(MemoryLayout<timeval>.size))
        while true {
            if pending.count >= 2 {
                var length = Int(pending[1] & 0x7F), offset = 2
                if length == 126, pending.count >= 4 {
                    length = Int(pending[2]) << 8 | Int(pending[3])
                    offset = 4
                } else if length == 127, pending.count >= 10 {
                    length = pending[2..<10].reduce(0) { $0 << 8 | Int($1) }
                    offset = 10
                }
                if length < 126 || offset > 2, pending.count >= offset + length {
                    let frame = RawFrame(opcode: pending[0] & 0x0F, payload: Array(pending[offset..<(offset + length)]))
                    pending.removeFirst(offset + length)
                    return frame
                }
            }
            let more = connection.read()
            guard !more.isEmpty else { throw RawError(description: "no frame") }
            pending += more
        }
    }
}
