import Foundation
import HaulCore
import HaulService
import HaulTestSupport
import Testing
@testable import HaulDaemon

/// The daemon's server under a local attacker, over loopback sockets: guesses from many
/// addresses share one budget, unauthenticated work is bounded, and no crowd of idle,
/// half-open, listening or throttled sockets keeps an authenticated client out; a wrong token
/// is answered no sooner than a second after it came, a right one at once.
/// Exclusive: times answers and holds a thousand sockets.
@Suite(.exclusive, .serialized, .timeLimit(.minutes(2)))
struct DaemonUnderAttackTests {
    static let version = DaemonServerTests.version

    static func head(_ port: Int, length: Int) -> String {
        "POST /jsonrpc HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nContent-Length: \(length)\r\n\r\n"
    }

    /// Sends `body` from `source` and reads the answer.
    static func post(_ port: Int, _ body: String, from source: String? = nil, receiveTimeout: Int = 10) throws -> RawResponse {
        try RawConnection(port: port, source: source, receiveTimeout: receiveTimeout).exchange(Array((head(port, length: body.utf8.count) + body).utf8))
    }

    /// Runs `body` on a thread of its own: blocking socket calls must not queue for the few
    /// threads of Swift's cooperative pool.
    static func onThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread { continuation.resume(with: Result { try body() }) }
        }
    }

    @Test func aWrongTokenIsAnsweredAfterASecondAndTheRightOneAtOnce() async throws {
        try await DaemonServerTests.withDaemon { daemon in
            let wrong = #"{"jsonrpc":"2.0","id":1,"method":"aria2.getVersion","params":["token:guess"]}"#
            let clock = ContinuousClock()
            let start = clock.now
            let answer = try DaemonServerTests.post(daemon, wrong)
            #expect(clock.now - start >= .milliseconds(990), "a wrong token answered after \(clock.now - start)")
            #expect(answer.status == 400)
            #expect(answer.body.contains("Unauthorized"))
            let good = clock.now
            #expect(try DaemonServerTests.post(daemon, Self.version).status == 200)
            #expect(clock.now - good < .milliseconds(900), "a good token is not delayed")
        }
    }

    /// A quarter of the default guess interval: 60 guesses then take 1.5 s, not 6 (the pacing
    /// is the same rule at any interval).
    static let interval = Duration.milliseconds(25)

    @Test func guessesFromSeveralLoopbackAddressesShareOneBudget() async throws {
        try await DaemonServerTests.withDaemon(configure: { $0.guessInterval = Self.interval }) { daemon in
            let port = daemon.server.address.port
            let wrong = #"{"jsonrpc":"2.0","id":1,"method":"aria2.getVersion","params":["token:guess"]}"#
            let multicall = #"{"jsonrpc":"2.0","id":2,"method":"system.multicall","params":[["#
                + Array(repeating: #"{"methodName":"aria2.getVersion","params":["token:g"]}"#, count: 10).joined(separator: ",") + "]]}"
            let batch = "[" + Array(repeating: wrong, count: 10).joined(separator: ",") + "]"
            let known = try RawConnection(port: port)   // a client that showed the token before the guesses
            #expect(try known.exchange(Array((Self.head(port, length: Self.version.utf8.count) + Self.version).utf8)).status == 200)
            let clock = ContinuousClock()
            let start = clock.now
            // 60 guesses: a batch of 10 and a multicall of 10 from each of three addresses, all at once.
            let answers = try await withThrowingTaskGroup(of: Duration.self) { group in
                for source in ["127.0.0.1", "127.0.0.2", "127.0.0.3"] {
                    for body in [batch, multicall] {
                        group.addTask {
                            let answer = try await Self.onThread { try Self.post(port, body, from: source) }
                            #expect(answer.body.contains("Unauthorized"))
                            return clock.now - start
                        }
                    }
                }
                try await Task.sleep(for: .milliseconds(300))
                let good = clock.now
                let request = Array((Self.head(port, length: Self.version.utf8.count) + Self.version).utf8)
                #expect(try known.exchange(request).status == 200)
                #expect(clock.now - good < .milliseconds(900), "a connection that showed the token is answered while guesses wait")
                return try await group.reduce(into: []) { $0.append($1) }
            }
            let last = try #require(answers.max())
            print("60 guesses from 3 loopback addresses answered within \(last)")
            #expect(last >= Self.interval * 59, "60 guesses answered within \(last)")
            #expect(last < .seconds(15))
        }
    }

    @Test func aRightGuessAmongManyConnectionsWaitsItsTurn() async throws {
        try await DaemonServerTests.withDaemon(configure: { $0.guessInterval = Self.interval }) { daemon in
            let port = daemon.server.address.port
            let call = { (token: String) in #"{"jsonrpc":"2.0","id":1,"method":"aria2.getVersion","params":["token:\#(token)"]}"# }
            // 79 wrong guesses at once, each on a connection of its own, then the secret on one more:
            // were checks not paced, its prompt answer would tell it from the others at once. The
            // first second's worth (40) are checked at once, the other 39 a guess interval apart.
            var guesses: [RawConnection] = []
            for index in 0..<79 {
                let connection = try RawConnection(port: port)
                try connection.write(Array((Self.head(port, length: call("guess\(index)").utf8.count) + call("guess\(index)")).utf8))
                guesses.append(connection)
            }
            try await Task.sleep(for: .milliseconds(100))
            let clock = ContinuousClock()
            let start = clock.now
            let secret = call("sekret")
            let right = try await Self.onThread { try Self.post(port, secret) }
            let waited = clock.now - start
            print("the right guess after 79 wrong ones on their own connections was answered after \(waited)")
            #expect(right.status == 200)
            #expect(waited >= Self.interval * 10, "the right guess was checked before the guesses ahead of it: \(waited)")
            #expect(waited < .seconds(10))
        }
    }

    @Test func clientsWithTheTokenOnFreshConnectionsAreNotPaced() async throws {
        try await DaemonServerTests.withDaemon { daemon in
            let port = daemon.server.address.port
            let clock = ContinuousClock()
            let start = clock.now
            for _ in 0..<50 {
                let answer = try Self.post(port, Self.version)
                #expect(answer.status == 200)
            }
            let took = clock.now - start
            print("50 calls with the token, each on a connection of its own, took \(took)")
            #expect((daemon.server.throttle.admissionTime(for: "127.0.0.1") ?? .now) <= .now,
                    "a right token spends no budget (50 checks at 10 a second would have spent 5 s)")
            #expect(took < .seconds(20))
        }
    }

    @Test func aLargeUnauthenticatedBatchGetsASmallAnswer() async throws {
        try await DaemonServerTests.withDaemon { daemon in
            let port = daemon.server.address.port
            let list = #"{"jsonrpc":"2.0","id":1,"method":"system.listMethods"}"#
            let huge = "[" + Array(repeating: list, count: (2 << 20) / (list.utf8.count + 1) - 1).joined(separator: ",") + "]"
            let thousand = "[" + Array(repeating: list, count: 1_000).joined(separator: ",") + "]"
            for body in [huge, thousand] {
                let answer = try Self.post(port, body)
                print("an unauthenticated batch of \(body.utf8.count) bytes: answer \(answer.body.utf8.count) bytes")
                #expect(answer.body.utf8.count <= 64 << 10)
                #expect(answer.body.contains("-32600"))
            }
        }
    }

    /// The daemon's resident memory in KiB (`VmRSS` of /proc/self/status: the daemon runs in
    /// this process).
    static func residentKiB() -> Int {
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
        return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
    }

    @Test func halfSentBodiesHoldNoMoreThanTheBufferBudget() async throws {
        try await DaemonServerTests.withDaemon(configure: { $0.maximumBufferedBytes = (3 << 20) + (64 << 10) }) { daemon in
            let port = daemon.server.address.port
            var senders: [RawConnection] = []
            for _ in 0..<4 {
                let connection = try RawConnection(port: port)
                try connection.write(Array(Self.head(port, length: 2 << 20).utf8) + [UInt8](repeating: 0x20, count: 1 << 20))
                senders.append(connection)
                try await Task.sleep(for: .milliseconds(100))
            }
            try await Task.sleep(for: .milliseconds(300))
            print("4 bodies half sent (1 MiB each) with a budget of 3 MiB and 64 KiB: \(daemon.server.connectionCount) connections held")
            #expect(daemon.server.connectionCount == 3, "the connection holding the most was closed to stay within the budget")
            #expect(try Self.post(port, Self.version).status == 200)
        }
    }

    @Test func aRequestHeadThatStallsIsDropped() async throws {
        try await DaemonServerTests.withDaemon(configure: { $0.headTimeout = .seconds(1) }) { daemon in
            let port = daemon.server.address.port
            let stalled = try RawConnection(port: port)
            try stalled.write(Array("POST /jsonrpc HTTP/1.1\r\nHost: 127.0.0.1\r\n".utf8))
            let silent = try RawConnection(port: port)
            let clock = ContinuousClock()
            let start = clock.now
            let answer = String(decoding: stalled.read(), as: UTF8.self)
            #expect(answer.hasPrefix("HTTP/1.1 408"))
            #expect(silent.read().isEmpty, "a connection that sends nothing is closed too")
            #expect(clock.now - start < .seconds(5))
        }
    }

    @Test func aListeningWebSocketWithoutTheTokenIsPingedAndClosedWhenSilent() async throws {
        try await DaemonServerTests.withDaemon(configure: { $0.webSocketPingInterval = .milliseconds(500) }) { daemon in
            let socket = try RawWebSocket(port: daemon.server.address.port)
            #expect(try socket.receive(timeout: 5).opcode == 0x9)
            let close = try socket.receive(timeout: 5)
            #expect(close.opcode == 0x8)
        }
    }

    @Test func webSocketsWithoutTheTokenHaveABudgetOfTheirOwn() async throws {
        try await DaemonServerTests.withDaemon(configure: { $0.maximumUnauthenticatedWebSockets = 4 }) { daemon in
            let port = daemon.server.address.port
            var sockets = try (0..<4).map { _ in try RawWebSocket(port: port) }
            #expect(throws: RawError.self, "a fifth without the token is refused") { try RawWebSocket(port: port) }
            // A call with the token and a close, in one write: the socket leaves the budget and ends in one turn.
            try sockets[0].sendRaw(RawWebSocket.frame(opcode: 0x1, Array(Self.version.utf8)) + RawWebSocket.frame(opcode: 0x8, [0x03, 0xE8]))
            #expect(try sockets[0].receive().opcode == 0x1)
            #expect(try sockets[0].receive().opcode == 0x8)
            try await Task.sleep(for: .milliseconds(200))
            sockets.append(try RawWebSocket(port: port))   // the place the authenticated one left
            #expect(throws: RawError.self, "its close frees no place in the budget") { try RawWebSocket(port: port) }
            try sockets[1].send(opcode: 0x8, [0x03, 0xE8])
            #expect(try sockets[1].receive().opcode == 0x8)
            try await Task.sleep(for: .milliseconds(200))
            #expect(throws: Never.self, "a socket without the token that left frees its place") { try RawWebSocket(port: port) }
        }
    }

    @Test func noCrowdOfLocalSocketsKeepsAnAuthenticatedClientOut() async throws {
        try await DaemonServerTests.withDaemon { daemon in
            let port = daemon.server.address.port
            var held: [RawConnection] = [], sockets: [RawWebSocket] = []
            for _ in 0..<100 {
                guard let socket = try? RawWebSocket(port: port) else { continue }
                sockets.append(socket)
            }
            #expect(sockets.count == daemon.server.configuration.maximumUnauthenticatedWebSockets)
            for index in 0..<1_000 {
                let connection = try RawConnection(port: port)
                try connection.write(Array("POST /jsonrpc HTTP/1.1\r\nHost: 127.0.0.\(index % 200 + 1)\r\n".utf8))
                held.append(connection)
            }
            let wrong = #"{"jsonrpc":"2.0","id":1,"method":"aria2.getVersion","params":["token:guess"]}"#
            for _ in 0..<200 {
                let gone = try RawConnection(port: port)
                try gone.write(Array((Self.head(port, length: wrong.utf8.count) + wrong).utf8))
            }
            try await Task.sleep(for: .milliseconds(500))
            let clock = ContinuousClock()
            let start = clock.now
            let answer = try Self.post(port, Self.version)
            let open = daemon.server.connectionCount
            print("with \(held.count) half-open heads, \(sockets.count) listening WebSockets and 200 throttled clients gone: "
                  + "the daemon holds \(open) connections on \(daemon.server.threads.threadCount) threads; "
                  + "an authenticated call took \(clock.now - start)")
            #expect(answer.status == 200)
            #expect(open <= held.count + sockets.count + 1, "the throttled clients that left are not held")
            #expect(clock.now - start < .seconds(3))
        }
    }
}

/// A client that asks for large answers and reads none of them is let go once its answers wait
/// longer than the write timeout, and the daemon goes on answering others. It times nothing (the
/// answers take their time to build, long under ThreadSanitizer: what counts is that the clients
/// are let go, not how soon), so it runs beside the other suites.
@Suite(.throttled, .timeLimit(.minutes(3)))
struct DaemonSlowReaderTests {
    @Test func aClientThatDoesNotReadItsAnswerIsDropped() async throws {
        try await DaemonServerTests.withDaemon(configure: { $0.writeTimeout = .seconds(1) }) { daemon in
            let port = daemon.server.address.port
            // About 12 MB of answer: more than the kernel's buffers hold for a client that reads nothing.
            let lists = #"{"jsonrpc":"2.0","id":2,"method":"system.multicall","params":[["#
                + Array(repeating: #"{"methodName":"system.listMethods"}"#, count: 1_000).joined(separator: ",") + "]]}"
            let body = "[" + DaemonUnderAttackTests.version + "," + Array(repeating: lists, count: 10).joined(separator: ",") + "]"
            let before = DaemonUnderAttackTests.residentKiB()
            var sleepers: [RawConnection] = []
            for _ in 0..<4 {
                let connection = try RawConnection(port: port)
                try connection.write(Array((DaemonUnderAttackTests.head(port, length: body.utf8.count) + body).utf8))
                sleepers.append(connection)
            }
            #expect(await eventually(timeout: .seconds(10)) { daemon.server.connectionCount == 4 })
            let during = DaemonUnderAttackTests.residentKiB()
            // The answers take their time to build (long under ThreadSanitizer); what counts is
            // that the clients are let go, not how soon.
            #expect(await eventually(timeout: .seconds(100)) { daemon.server.connectionCount == 0 },
                    "the daemon let go of clients that did not read")
            print("4 clients that do not read 12 MB answers dropped; "
                  + "resident memory \(before) KiB before, \(during) KiB while held, \(DaemonUnderAttackTests.residentKiB()) KiB after")
            // A loaded machine (the whole suite beside it) may take a while to schedule the call;
            // a close without an answer still fails at once.
            #expect(try DaemonUnderAttackTests.post(port, DaemonUnderAttackTests.version, receiveTimeout: 60).status == 200)
        }
    }
}
