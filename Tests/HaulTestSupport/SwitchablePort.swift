import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A port of 127.0.0.1 that refuses connections (bound, not listening), and can answer one
/// request before it refuses again (the listening socket shut, still holding the port).
public final class SwitchablePort: Sendable {
    /// The port number.
    public let port: Int
    private let descriptor: Int32

    /// Binds an ephemeral port of 127.0.0.1 without listening.
    public init() throws {
        let (fd, port) = try Self.socket(boundTo: 0)
        self.port = port
        descriptor = fd
    }

    deinit { close(descriptor) }

    /// `http://127.0.0.1:PORT` followed by `path`.
    public func url(_ path: String) -> URL { URL(string: "http://127.0.0.1:\(port)\(path)")! }

    /// Listens, answers the first connection's request with `status` and `body` (then closes it),
    /// and refuses again before that answer's client can connect anew.
    public func serveOnce(status: Int, body: String) throws {
        let listener = descriptor
        try #require(listen(listener, 1) == 0)
        Thread {
            let connection = accept(listener, nil, nil)
            guard connection >= 0 else { return }
            var request = [UInt8](repeating: 0, count: 4096)
            var received = 0
            while received < request.count {
                let n = request.withUnsafeMutableBytes { recv(connection, $0.baseAddress! + received, $0.count - received, 0) }
                if n <= 0 { break }
                received += n
                if String(decoding: request[..<received], as: UTF8.self).contains("\r\n\r\n") { break }
            }
            // Refuse again first: the client's next attempt comes once it has read this answer.
            // Shut, not closed: the socket keeps the port, which another test's server could
            // take in the moment between a close and a new bind.
            _ = shutdown(listener, Int32(SHUT_RD))
            let reason = status == 200 ? "OK" : "Service Unavailable"
            let response = Array("HTTP/1.1 \(status) \(reason)\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)".utf8)
            _ = response.withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Self.noSignal) }
            close(connection)
        }.start()
    }

    #if canImport(Glibc)
    private static let noSignal = Int32(MSG_NOSIGNAL)
    #else
    private static let noSignal: Int32 = 0
    #endif

    private static func socket(boundTo port: Int) throws -> (Int32, Int) {
        #if canImport(Glibc)
        let fd = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let fd = Darwin.socket(AF_INET, SOCK_STREAM, 0)
        #endif
        try #require(fd >= 0)
        var one: Int32 = 1
        _ = setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        #if canImport(Darwin)
        address.sin_len = UInt8(MemoryLayout<sockaddr_in>.size)
        #endif
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        if !bound { close(fd) }
        try #require(bound, "cannot bind 127.0.0.1:\(port)")
        return (fd, Int(UInt16(bigEndian: address.sin_port)))
    }
}
