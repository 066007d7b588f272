import Synchronization
/// The SOCKS5 proxy (RFC 1928, with RFC 1929 username/password).
extension ProxyCore {
    func serveSOCKS(_ client: ProxyStream) {
        var record = ProxyServer.SOCKSRequest(methods: [], addressType: 0, host: "", port: 0)
        var recorded = false
        // Recorded before the tunnel's relay, which lasts as long as the client keeps the connection.
        defer { if !recorded { state.withLock { $0.socks.append(record) } } }
        guard let greeting = client.readExactly(2), greeting[0] == 5,
              let methods = client.readExactly(Int(greeting[1])) else { return }
        record.methods = methods
        guard let method = chooseMethod(offered: methods) else {
            client.write([5, 0xFF])
            return
        }
        client.write([5, method])
        if method == 2 && !authenticate(client, &record) { return }
        guard let head = client.readExactly(4), head[0] == 5, head[1] == 1,
              let (host, port) = readTarget(client, addressType: head[3]) else { return }
        record.addressType = head[3]
        record.host = host
        record.port = port
        state.withLock { $0.socks.append(record) }
        recorded = true
        answer(client, host: host, port: port)
    }

    /// The method the proxy picks, or `nil` for "no acceptable method".
    private func chooseMethod(offered: [UInt8]) -> UInt8? {
        if configuration.behaviour == .socksPicksUnofferedMethod { return offered.contains(2) ? 0x80 : 2 }
        if configuration.user != nil { return offered.contains(2) ? 2 : nil }
        return offered.contains(0) ? 0 : nil
    }

    private func authenticate(_ client: ProxyStream, _ record: inout ProxyServer.SOCKSRequest) -> Bool {
        guard let version = client.readExactly(2), version[0] == 1,
              let user = client.readExactly(Int(version[1])), let length = client.readExactly(1),
              let password = client.readExactly(Int(length[0])) else { return false }
        record.user = String(decoding: user, as: UTF8.self)
        record.password = String(decoding: password, as: UTF8.self)
        let accepted = record.user == configuration.user && record.password == (configuration.password ?? "")
        client.write([1, accepted ? 0 : 1])
        return accepted
    }

    private func readTarget(_ client: ProxyStream, addressType: UInt8) -> (String, Int)? {
        let host: String
        switch addressType {
        case 1:
            guard let bytes = client.readExactly(4) else { return nil }
            host = bytes.map(String.init).joined(separator: ".")
        case 4:
            guard let bytes = client.readExactly(16) else { return nil }
            host = bytes == [UInt8](repeating: 0, count: 15) + [1] ? "::1" : "ipv6"
        case 3:
            guard let length = client.readExactly(1), let bytes = client.readExactly(Int(length[0])) else { return nil }
            host = String(decoding: bytes, as: UTF8.self)
        default:
            return nil
        }
        guard let port = client.readExactly(2) else { return nil }
        return (host, Int(port[0]) << 8 | Int(port[1]))
    }

    private func answer(_ client: ProxyStream, host: String, port: Int) {
        switch configuration.behaviour {
        case .socksTruncatedReply:
            client.write([5, 0])
            _ = client.read(upTo: 1)   // until the client gives up
            return
        case .socksReply(let code):
            client.write([5, code, 0, 1, 0, 0, 0, 0, 0, 0])
            return
        default:
            break
        }
        guard let upstream = connectUpstream(host: host, port: port) else {
            client.write([5, 5, 0, 1, 0, 0, 0, 0, 0, 0])
            return
        }
        defer { upstream.close() }
        // A bound address of type 3 (a name): the client must read its variable length exactly.
        client.write([5, 0, 0, 3, 9] + Array("localhost".utf8) + [UInt8(port >> 8), UInt8(port & 0xFF)])
        relay(client, upstream)
    }
}
