import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CHaulTLS

/// One side of a proxied connection: a socket, with TLS when the client speaks it to the proxy.
final class ProxyStream {
    let fd: Int32
    var ssl: OpaquePointer?
    /// Bytes read past a request head, handed on before anything else.
    var pending: [UInt8] = []
    private var closed = false

    init(fd: Int32, ssl: OpaquePointer?) {
        self.fd = fd
        self.ssl = ssl
    }

    /// Reads up to `count` bytes; empty at the end of the stream or on an error.
    func read(upTo count: Int) -> [UInt8] {
        if !pending.isEmpty {
            let taken = Array(pending.prefix(count))
            pending.removeFirst(taken.count)
            return taken
        }
        var buffer = [UInt8](repeating: 0, count: count)
        let got: Int = buffer.withUnsafeMutableBytes { raw in
            if let ssl { return Int(SSL_read(ssl, raw.baseAddress, Int32(raw.count))) }
            while true {
                let n = recv(fd, raw.baseAddress, raw.count, 0)
                if n < 0 && errno == EINTR { continue }
                return n
            }
        }
        return got > 0 ? Array(buffer[0..<got]) : []
    }

    /// Reads exactly `count` bytes; `nil` when the stream ends first.
    func readExactly(_ count: Int) -> [UInt8]? {
        var bytes: [UInt8] = []
        while bytes.count < count {
            let more = read(upTo: count - bytes.count)
            if more.isEmpty { return nil }
            bytes += more
        }
        return bytes
    }

    /// Writes every byte; `false` when the peer has gone.
    @discardableResult
    func write(_ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let n: Int = bytes.withUnsafeBytes { raw in
                if let ssl { return Int(SSL_write(ssl, raw.baseAddress! + offset, Int32(raw.count - offset))) }
                return send(fd, raw.baseAddress! + offset, raw.count - offset, POSIX.noSignal)
            }
            if n < 0 && errno == EINTR && ssl == nil { continue }
            guard n > 0 else { return false }
            offset += n
        }
        return true
    }

    @discardableResult
    func write(_ text: String) -> Bool { write(Array(text.utf8)) }

    /// Whether a read would not block (TLS bytes already decrypted count).
    var hasBufferedBytes: Bool { !pending.isEmpty || (ssl.map { SSL_pending($0) > 0 } ?? false) }

    /// Reads a request head (up to `\r\n\r\n`, at most 64 KiB); what follows stays in `pending`.
    func readHead() -> ArraySlice<UInt8>? {
        var bytes: [UInt8] = []
        while true {
            if let end = findTerminator(bytes) {
                pending = Array(bytes[(end + 4)...]) + pending
                return bytes[..<end]
            }
            if bytes.count > 64 * 1024 { return nil }
            let more = read(upTo: 16 * 1024)
            if more.isEmpty { return nil }
            bytes += more
        }
    }

    private func findTerminator(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for index in 0...(bytes.count - 4) where bytes[index] == 13 && bytes[index + 1] == 10
            && bytes[index + 2] == 13 && bytes[index + 3] == 10 {
            return index
        }
        return nil
    }

    func close() {
        guard !closed else { return }
        closed = true
        if let ssl {
            _ = SSL_shutdown(ssl)
            SSL_free(ssl)
            self.ssl = nil
        }
        systemClose(fd)
    }
}

extension ProxyCore {
    /// Connects to a loopback target: `localhost`, an address in 127.0.0.0/8, or ::1.
    ///
    /// - Returns: the connected stream, or `nil` (refused, or not a loopback target).
    func connectUpstream(host: String, port: Int) -> ProxyStream? {
        let name = host.hasPrefix("[") ? String(host.dropFirst().dropLast()) : host
        let address = name == "localhost" ? "127.0.0.1" : name
        var storage = sockaddr_storage()
        let family: Int32
        let length: socklen_t
        var v4 = sockaddr_in()
        var v6 = sockaddr_in6()
        if inet_pton(AF_INET, address, &v4.sin_addr) == 1 {
            guard address.hasPrefix("127.") else { return nil }
            v4.sin_family = sa_family_t(AF_INET)
            v4.sin_port = in_port_t(UInt16(port).bigEndian)
            withUnsafeBytes(of: v4) { source in withUnsafeMutableBytes(of: &storage) { $0.copyMemory(from: source) } }
            family = AF_INET
            length = socklen_t(MemoryLayout<sockaddr_in>.size)
        } else if address == "::1", inet_pton(AF_INET6, address, &v6.sin6_addr) == 1 {
            v6.sin6_family = sa_family_t(AF_INET6)
            v6.sin6_port = in_port_t(UInt16(port).bigEndian)
            withUnsafeBytes(of: v6) { source in withUnsafeMutableBytes(of: &storage) { $0.copyMemory(from: source) } }
            family = AF_INET6
            length = socklen_t(MemoryLayout<sockaddr_in6>.size)
        } else {
            return nil
        }
        #if canImport(Glibc)
        let fd = socket(family, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let fd = socket(family, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { return nil }
        let rc = withUnsafePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, length) }
        }
        guard rc == 0 else {
            systemClose(fd)
            return nil
        }
        return ProxyStream(fd: fd, ssl: nil)
    }

    /// Copies bytes both ways until either side closes (or the proxy stops).
    func relay(_ a: ProxyStream, _ b: ProxyStream) {
        guard let id = track(b.fd, isClient: false) else { return }
        defer { untrack(id) }
        while true {
            var ready = Set<Int>()
            if a.hasBufferedBytes { ready.insert(0) }
            if b.hasBufferedBytes { ready.insert(1) }
            if ready.isEmpty { ready = Set(POSIX.pollReadable([a.fd, b.fd], timeoutMilliseconds: 200)) }
            if state.withLock({ $0.stopped }) { return }
            for index in ready {
                let (from, to) = index == 0 ? (a, b) : (b, a)
                let bytes = from.read(upTo: 256 * 1024)
                if bytes.isEmpty || !to.write(bytes) { return }
            }
        }
    }
}

/// `close(2)`, named apart from ``ProxyStream/close()``.
private func systemClose(_ fd: Int32) {
    #if canImport(Glibc)
    _ = Glibc.close(fd)
    #else
    _ = Darwin.close(fd)
    #endif
}
