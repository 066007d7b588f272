import HaulCore
import HaulJSON
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Why a call to a daemon failed.
public struct DaemonClientError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of failure.
    public enum Kind: Sendable, Equatable {
        /// No connection could be made, or it broke.
        case unreachable
        /// The answer was not an HTTP response with a JSON-RPC body.
        case protocolError
        /// The daemon answered with an error object.
        case rpc(code: Int)
    }

    /// What kind of failure.
    public var kind: Kind
    /// One sentence.
    public var message: String

    /// The message.
    public var description: String { message }
}

/// A small blocking JSON-RPC client for a daemon on `http://HOST:PORT/jsonrpc` (the `haul`
/// client commands and the tests use it): one connection per call, `token:SECRET` added.
public struct DaemonClient: Sendable {
    /// The host (an IP literal or `localhost`).
    public let host: String
    /// The port.
    public let port: Int
    /// The path (normally `/jsonrpc`).
    public let path: String
    /// The secret, if the daemon wants one.
    public let secret: String?
    /// How long a call may take.
    public var timeout: Duration = .seconds(30)

    /// Parses `http://HOST:PORT/PATH`; `nil` for anything else (https is not served).
    public init?(url: String, secret: String?) {
        guard url.hasPrefix("http://") else { return nil }
        let rest = url.dropFirst(7)
        let authority = rest.prefix { $0 != "/" }
        guard let (host, port) = RequestPolicy.split(hostAndPort: String(authority)) else { return nil }
        self.host = host
        self.port = port ?? 80
        let path = String(rest.dropFirst(authority.count))
        self.path = path.isEmpty ? "/jsonrpc" : path
        self.secret = secret
    }

    /// Calls `method` with `params` (the token first, for methods that take one).
    ///
    /// - Returns: the result.
    /// - Throws: ``DaemonClientError``.
    public func call(_ method: String, _ params: [JSONValue] = []) throws(DaemonClientError) -> JSONValue {
        var all = params
        if let secret, !method.hasPrefix("system.") { all.insert(.string("token:" + secret), at: 0) }
        let request: JSONValue = ["jsonrpc": "2.0", "id": "haul", "method": .string(method), "params": .array(all)]
        let body = try exchange(JSONWriter.encode(request))
        guard let reply = (try? JSONParser().parse(body))?.object else {
            throw DaemonClientError(kind: .protocolError, message: "the daemon's answer is not JSON-RPC")
        }
        if let error = reply["error"]?.object {
            let code = Int(error["code"]?.integer ?? 1)
            throw DaemonClientError(kind: .rpc(code: code), message: error["message"]?.string ?? "error \(code)")
        }
        return reply["result"] ?? .null
    }

    /// Sends one POST and returns the response body.
    private func exchange(_ body: [UInt8]) throws(DaemonClientError) -> [UInt8] {
        let fd = try openConnection()
        defer { closeDescriptor(fd) }
        let hostField = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        let head = "POST \(path) HTTP/1.1\r\nHost: \(hostField)\r\nContent-Type: application/json\r\n"
            + "Content-Length: \(body.count)\r\nConnection: close\r\n\r\n"
        guard DaemonSocket.write(fd, Array(head.utf8) + body) else {
            throw DaemonClientError(kind: .unreachable, message: "the connection to \(hostField) broke")
        }
        var response: [UInt8] = []
        let deadline = ContinuousClock.now + timeout
        while true {
            guard DaemonSocket.wait(fd, until: deadline) == .readable else {
                throw DaemonClientError(kind: .unreachable, message: "no answer from \(hostField) in time")
            }
            let bytes = DaemonSocket.read(fd)
            if bytes.isEmpty { break }
            response += bytes
            guard response.count <= 256 << 20 else { break }
        }
        guard let end = HTTPRequestParser.headEnd(response), response.starts(with: Array("HTTP/1.".utf8)) else {
            throw DaemonClientError(kind: .protocolError, message: "the answer from \(hostField) is not HTTP")
        }
        return Array(response[(end + 4)...])
    }

    private func openConnection() throws(DaemonClientError) -> Int32 {
        var hints = addrinfo()
        hints.ai_socktype = streamSocketType
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &list) == 0, let first = list else {
            throw DaemonClientError(kind: .unreachable, message: "cannot resolve \(host)")
        }
        defer { freeaddrinfo(list) }
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let current = entry {
            let fd = socket(current.pointee.ai_family, current.pointee.ai_socktype, current.pointee.ai_protocol)
            if fd >= 0 {
                suppressSIGPIPE(onSocket: fd)
                if connect(fd, current.pointee.ai_addr, current.pointee.ai_addrlen) == 0 { return fd }
                closeDescriptor(fd)
            }
            entry = current.pointee.ai_next
        }
        throw DaemonClientError(kind: .unreachable, message: "cannot connect to \(host):\(port): \(errnoText())")
    }
}
