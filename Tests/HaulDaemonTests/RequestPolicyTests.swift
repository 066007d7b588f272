import Testing
@testable import HaulDaemon

/// The security rules as a pure function of the request head, one rule at a time: each test
/// fails when its rule is taken out.
@Suite struct RequestPolicyTests {
    static let loopback = RequestPolicy(listen: ListenAddress(host: "127.0.0.1", port: 6800))

    static func head(_ method: String = "POST", _ target: String = "/jsonrpc", host: String? = "127.0.0.1:6800",
                     fields: [(String, String)] = []) -> HTTPRequestHead {
        var all = fields
        if let host { all.insert(("Host", host), at: 0) }
        return HTTPRequestHead(method: method, target: target, fields: all.map { (name: $0.0, value: $0.1) })
    }

    @Test(arguments: ["127.0.0.1:6800", "127.0.0.1", "127.1.2.3:6800", "localhost:6800", "LOCALHOST", "[::1]:6800", "[::1]"])
    func loopbackHostsAreAccepted(host: String) {
        #expect(Self.loopback.route(Self.head(host: host)) == .rpc)
    }

    @Test(arguments: ["evil.example:6800", "evil.example", "localhost.evil.example", "127.0.0.1.nip.io:6800", "192.168.1.5:6800",
                      "", "[::1", "a:b:c", "[fe80::1]:6800", "0.0.0.0:6800"])
    func otherHostsAreRefusedAgainstDNSRebinding(host: String) {
        #expect(Self.loopback.route(Self.head(host: host)) == .refused(status: 403, reason: "the Host is neither a loopback address nor the listen address"))
    }

    @Test func theListenAddressIsAcceptedAndAWildcardAcceptsIPLiteralsOnly() {
        let lan = RequestPolicy(listen: ListenAddress(host: "192.168.1.5", port: 6800))
        #expect(lan.route(Self.head(host: "192.168.1.5:6800")) == .rpc)
        #expect(lan.acceptsHost("192.168.1.6") == false)
        let all = RequestPolicy(listen: ListenAddress(host: "0.0.0.0", port: 6800))
        #expect(all.acceptsHost("10.0.0.7:6800"))
        #expect(all.acceptsHost("[2001:db8::1]:6800"))
        #expect(!all.acceptsHost("evil.example:6800"))
    }

    @Test(arguments: ["http://127.0.0.1:6800", "http://localhost:6800", "http://[::1]:6800", "HTTP://LOCALHOST:6800/"])
    func theDaemonsOwnOriginIsAccepted(origin: String) {
        #expect(Self.loopback.route(Self.head(fields: [("Origin", origin)])) == .rpc)
        #expect(Self.loopback.route(Self.head("GET", "/jsonrpc", fields: [("Origin", origin), ("Upgrade", "websocket")])) == .webSocket)
    }

    @Test(arguments: ["http://evil.example", "null", "http://127.0.0.1:6801", "https://127.0.0.1:6800", "http://localhost",
                      "http://evil.example:6800", "file://", ""])
    func otherOriginsAreRefusedForPostAndForTheWebSocket(origin: String) {
        let refused = RequestPolicy.Route.refused(status: 403, reason: "the Origin is not allowed")
        #expect(Self.loopback.route(Self.head(fields: [("Origin", origin)])) == refused)
        #expect(Self.loopback.route(Self.head("GET", "/jsonrpc", fields: [("Origin", origin), ("Upgrade", "websocket")])) == refused)
    }

    @Test func anAllowedOriginIsAcceptedAndMayReadTheAnswer() {
        let policy = RequestPolicy(listen: ListenAddress(host: "127.0.0.1", port: 6800), allowedOrigins: ["https://ui.example/"])
        let head = Self.head(fields: [("Origin", "https://ui.example")])
        #expect(policy.route(head) == .rpc)
        #expect(policy.corsFields(for: head) == [.init("Access-Control-Allow-Origin", "https://ui.example"), .init("Vary", "Origin")])
        #expect(policy.corsFields(for: Self.head()) == [])
    }

    @Test func aBodyOverTheLimitIsRefused() {
        let limit = 2 << 20
        #expect(Self.loopback.route(Self.head(fields: [("Content-Length", String(limit))])) == .rpc)
        #expect(Self.loopback.route(Self.head(fields: [("Content-Length", String(limit + 1))]))
                == .refused(status: 413, reason: "the body is over \(limit) bytes"))
    }

    @Test func jsonrpcTakesPostWebSocketAndPreflightButNeverAPlainGet() {
        #expect(Self.loopback.route(Self.head("OPTIONS")) == .preflight)
        if case .refused(let status, _) = Self.loopback.route(Self.head("GET", "/jsonrpc?method=aria2.addUri&id=1&params=W10=")) {
            #expect(status == 405)
        } else {
            Issue.record("a GET method call was not refused")
        }
        if case .refused(let status, _) = Self.loopback.route(Self.head("GET", "/jsonrpc?jsoncallback=f")) { #expect(status == 405) }
        if case .refused(let status, _) = Self.loopback.route(Self.head("PUT")) { #expect(status == 405) }
        #expect(Self.loopback.route(Self.head("GET", "/")) == .staticFile("/"))
        if case .refused(let status, _) = Self.loopback.route(Self.head("POST", "/")) { #expect(status == 405) }
    }

    @Test func listenAddressesParse() {
        #expect(ListenAddress(parsing: "127.0.0.1:6800") == ListenAddress(host: "127.0.0.1", port: 6800))
        #expect(ListenAddress(parsing: "[::1]:0") == ListenAddress(host: "::1", port: 0))
        #expect(ListenAddress(parsing: "localhost:7") == ListenAddress(host: "127.0.0.1", port: 7))
        for bad in ["127.0.0.1", "example.com:80", ":80", "127.0.0.1:65536", "[::1]", "1.2.3.4:x"] {
            #expect(ListenAddress(parsing: bad) == nil, "\(bad)")
        }
        #expect(ListenAddress(host: "::1", port: 1).isLoopback)
        #expect(ListenAddress(host: "127.9.9.9", port: 1).isLoopback)
        #expect(!ListenAddress(host: "0.0.0.0", port: 1).isLoopback)
        #expect(ListenAddress(host: "::", port: 1).isWildcard)
    }

    @Test func secretsCompareByDigest() {
        let secret = RPCSecret("s3cret")
        #expect(secret.matches("s3cret"))
        #expect(!secret.matches("s3cre"))
        #expect(!secret.matches("s3cret "))
        #expect(!secret.matches(""))
        #expect(RPCSecret.constantTimeEqual([1, 2, 3], [1, 2, 3]))
        #expect(!RPCSecret.constantTimeEqual([1, 2, 3], [1, 2, 4]))
        #expect(!RPCSecret.constantTimeEqual([1, 2], [1, 2, 3]))
    }

    @Test func wrongTokensFromAnyLoopbackAddressSpendOneBudget() {
        let throttle = AuthThrottle(delay: .seconds(1), interval: .milliseconds(100))
        let now = ContinuousClock.now
        #expect(throttle.answerTime(guesses: 1, from: "127.0.0.1", now: now) - now == .seconds(1))
        #expect(throttle.answerTime(guesses: 20, from: "127.0.0.2", now: now) - now == .milliseconds(2_100),
                "another loopback address spends the same budget: 21 guesses at 10 a second")
        #expect(throttle.answerTime(guesses: 1, from: "192.0.2.7", now: now) - now == .seconds(1), "another machine has its own")
        let later = now + .seconds(10)
        #expect(throttle.answerTime(guesses: 1, from: "::1", now: later) - later == .seconds(1), "the budget recovers")
    }
}
