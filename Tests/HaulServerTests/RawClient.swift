#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import Testing

/// A blocking loopback client for tests: sends raw bytes, reads raw responses.
///
/// Deliberately independent of Haul's client (and of the server's own parser).
final class RawClient {
    let fd: Int32

    struct Failure: Error, CustomStringConvertible { var description: String }

    /// Connects to `host` (`127.0.0.1` or `::1`) on `port`; reads time out after `timeout` seconds.
    init(host: String = "127.0.0.1", port: Int, timeout: Double = 10) throws {
        let isIPv6 = host.contains(":")
        #if canImport(Glibc)
        fd = socket(isIPv6 ? AF_INET6 : AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        fd = socket(isIPv6 ? AF_INET6 : AF_INET, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { throw Failure(description: "socket failed") }
        var time = timeval()
        time.tv_sec = .init(timeout)
        time.tv_usec = .init((timeout - timeout.rounded(.down)) * 1e6)
        _ = setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
        let rc: Int32
        if isIPv6 {
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = UInt16(port).bigEndian
            _ = inet_pton(AF_INET6, host, &address.sin6_addr)
            rc = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) }
            }
        } else {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = UInt16(port).bigEndian
            _ = inet_pton(AF_INET, host, &address.sin_addr)
            rc = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
        }
        guard rc == 0 else {
            // No close here: `fd` is set, so the instance is fully initialised and Swift runs
            // `deinit` when this initialiser throws. Closing here too closed the descriptor
            // twice, and the second close hit whatever another test had opened under that
            // number in between (a server's connection, another client).
            let code = errno
            throw Failure(description: "connect failed: \(String(cString: strerror(code)))")
        }
    }

    /// The only place the descriptor is closed, also when `init` throws (see there).
    deinit { if fd >= 0 { _ = systemClose(fd) } }

    private var buffered: [UInt8] = []
    /// Whether the last read ended because the server closed (not a timeout).
    private(set) var sawEndOfStream = false

    func send(_ text: String) throws {
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let count = bytes[offset...].withUnsafeBytes { systemSend(fd, $0) }
            guard count > 0 else { throw Failure(description: "send failed") }
            offset += count
        }
    }

    /// Sends a GET (or `method`) request for `target` with extra header lines.
    func request(_ target: String, method: String = "GET", headers: [String] = []) throws {
        var text = "\(method) \(target) HTTP/1.1\r\nHost: localhost\r\n"
        for header in headers { text += header + "\r\n" }
        try send(text + "\r\n")
    }

    /// Reads once into the buffer; `false` at end of stream, error or timeout.
    private func fill() -> Bool {
        var chunk = [UInt8](repeating: 0, count: 256 * 1024)
        let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if count == 0 { sawEndOfStream = true }
        if count < 0 && errno == ECONNRESET { sawEndOfStream = true }
        guard count > 0 else { return false }
        buffered += chunk[0..<count]
        return true
    }

    /// Everything until the server closes (or the read times out).
    func readToEnd() -> [UInt8] {
        while fill() {}
        defer { buffered = [] }
        return buffered
    }

    /// Reads exactly `count` bytes, or fewer if the stream ends first.
    func read(count: Int) -> [UInt8] {
        while buffered.count < count, fill() {}
        let result = Array(buffered.prefix(count))
        buffered.removeFirst(result.count)
        return result
    }

    /// Reads one line ending in CRLF (without it), or `nil` at end of stream.
    func readLine() -> String? {
        while true {
            if let index = buffered.indices.dropLast().first(where: { buffered[$0] == 13 && buffered[$0 + 1] == 10 }) {
                let line = String(decoding: buffered[0..<index], as: UTF8.self)
                buffered.removeFirst(index + 2)
                return line
            }
            guard fill() else { return nil }
        }
    }

    /// Reads a response: head, then the body framed by `Content-Length`, chunked coding, or EOF.
    func readResponse(isHead: Bool = false) throws -> RawResponse {
        guard let statusLine = readLine() else { throw Failure(description: "no status line") }
        let parts = statusLine.split(separator: " ", maxSplits: 2)
        guard parts.count >= 2, let status = Int(parts[1]) else { throw Failure(description: "bad status line \(statusLine)") }
        var headers: [(String, String)] = []
        while let line = readLine(), !line.isEmpty {
            let colon = line.firstIndex(of: ":")!
            headers.append((String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
        }
        var response = RawResponse(status: status, headers: headers, body: [])
        if isHead || status == 204 || status == 304 { return response }
        if response.header("transfer-encoding") == "chunked" {
            while let sizeLine = readLine() {
                let size = Int(sizeLine.split(separator: ";")[0], radix: 16) ?? -1
                guard size > 0 else { break }
                response.body += read(count: size)
                _ = readLine()
            }
            while let trailer = readLine(), !trailer.isEmpty { response.trailers.append(trailer) }
        } else if let length = response.header("content-length").flatMap({ Int($0) }) {
            response.body = read(count: length)
        } else {
            response.body = readToEnd()
        }
        return response
    }
}

/// A response as `RawClient` read it.
struct RawResponse {
    var status: Int
    var headers: [(String, String)]
    var body: [UInt8]
    var trailers: [String] = []

    func header(_ name: String) -> String? {
        headers.first { $0.0.lowercased() == name.lowercased() }?.1
    }

    var text: String { String(decoding: body, as: UTF8.self) }
}

private func systemClose(_ fd: Int32) -> Int32 { close(fd) }

private func systemSend(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Int {
    #if canImport(Glibc)
    send(fd, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL))
    #else
    send(fd, bytes.baseAddress, bytes.count, 0)
    #endif
}

/// Expects `body == expected` without printing megabytes of bytes when they differ.
func expectBody(_ body: [UInt8], _ expected: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) {
    let same = body == expected
    let firstDifference = zip(body, expected).enumerated().first { $0.element.0 != $0.element.1 }?.offset
    #expect(same, "body of \(body.count) bytes differs from the expected \(expected.count) bytes (first difference at \(firstDifference.map(String.init) ?? "the end"))",
            sourceLocation: sourceLocation)
}

