import Foundation
import HaulJSON
import HaulService
import HaulTestSupport
import Testing
@testable import HaulDaemon

/// What a caller without the token can learn and cost, without a socket: nothing it sent comes
/// back but the ids, every wrong token is a guess, and its work and answer are bounded.
/// Serialized: each probe makes a service with a state file of its own; one at a time keeps the
/// suite light beside the suites that pace transfers.
@Suite(.serialized) struct UnauthenticatedCallerTests {
    /// Bodies that carry `CANDIDATE` in every place an answer may quote: method names, a
    /// multicall's method names, parameters, ids, the batch itself; never as the token.
    static let probes = [
        #"{"jsonrpc":"2.0","id":"CANDIDATE","method":"CANDIDATE","params":["CANDIDATE"]}"#,
        #"{"jsonrpc":"2.0","id":"x-CANDIDATE-x","method":"x-CANDIDATE-x"}"#,
        #"{"jsonrpc":"2.0","id":1,"method":"system.multicall","params":[[{"methodName":"CANDIDATE","params":["CANDIDATE"]},"#
            + #"{"methodName":"x-CANDIDATE-x"},{"methodName":"aria2.tellStatus","params":["CANDIDATE"]},"#
            + #"{"methodName":"aria2.tellStatus","params":["token:guess","CANDIDATE"]},{"methodName":"system.listMethods","params":["CANDIDATE"]},"#
            + #""CANDIDATE",{"methodName":7,"params":["CANDIDATE"]},{"methodName":"system.multicall","params":["CANDIDATE"]}]]}"#,
        #"{"jsonrpc":"2.0","id":2,"method":"system.multicall","params":["CANDIDATE"]}"#,
        #"{"jsonrpc":"2.0","id":3,"method":"system.multicall","params":{"CANDIDATE":"CANDIDATE"}}"#,
        #"[{"jsonrpc":"2.0","id":"CANDIDATE","method":"aria2.tellStatus","params":["CANDIDATE"]},"CANDIDATE","#
            + #"{"id":4,"method":"aria2.addUri","params":["token:CANDIDATE-no",["http://CANDIDATE/"]]},{"method":"CANDIDATE"}]"#,
        #"{"jsonrpc":"2.0","id":5,"method":"aria2.getVersion","params":[{"token":"CANDIDATE"}]}"#,
        #"["CANDIDATE"]"#,
        #"{"CANDIDATE"}"#,
    ]

    /// The answer to `probe` with `candidate` in it, the candidate's own text put back as
    /// `CANDIDATE` (ids echo what they were sent, for either candidate alike).
    static func answer(_ rpc: Aria2RPC, _ probe: String, _ candidate: String) -> String {
        let reply = rpc.handle(Array(probe.replacingOccurrences(of: "CANDIDATE", with: candidate).utf8))
        return "\(reply.status) \(reply.guesses) " + String(decoding: reply.body, as: UTF8.self)
            .replacingOccurrences(of: candidate, with: "CANDIDATE")
    }

    @Test(arguments: probes) func theSecretAndAWrongGuessGetTheSameAnswer(probe: String) async throws {
        try await Aria2RPCTests.withRPC { rpc, _, _ in
            let right = Self.answer(rpc, probe, "sekret")
            let wrong = Self.answer(rpc, probe, "sekreu")
            #expect(right == wrong)
            #expect(!right.contains("***"), "nothing redacted comes back: \(right)")
        }
    }

    @Test func afterTheTokenTheCallersTextIsQuoted() async throws {
        try await Aria2RPCTests.withRPC { rpc, _, _ in
            let multicall = Aria2RPCTests.result(rpc, "system.multicall", [[
                ["methodName": "aria2.getVersion", "params": ["token:sekret"]],
                ["methodName": "aria2.nope"],
            ]])
            #expect(multicall.array?[1] == ["code": 1, "message": "No such method: aria2.nope"])
            let before = Aria2RPCTests.result(rpc, "system.multicall", [[["methodName": "aria2.nope"]]])
            #expect(before.array?[0] == ["code": 1, "message": "No such method."])
        }
    }

    @Test func everyWrongTokenIsAGuessWhereverItIs() async throws {
        try await Aria2RPCTests.withRPC { rpc, _, _ in
            let wrong = #"{"jsonrpc":"2.0","id":1,"method":"aria2.getVersion","params":["token:a"]}"#
            let multicall = #"{"jsonrpc":"2.0","id":2,"method":"system.multicall","params":[["#
                + Array(repeating: #"{"methodName":"aria2.getVersion","params":["token:b"]}"#, count: 4).joined(separator: ",") + "]]}"
            let batch = "[" + Array(repeating: wrong, count: 3).joined(separator: ",") + "," + multicall + "]"
            #expect(rpc.handle(Array(wrong.utf8)).guesses == 1)
            #expect(rpc.handle(Array(multicall.utf8)).guesses == 4)
            #expect(rpc.handle(Array(batch.utf8)).guesses == 7)
            let good = #"{"jsonrpc":"2.0","id":1,"method":"aria2.getVersion","params":["token:sekret"]}"#
            #expect(rpc.handle(Array(good.utf8)).guesses == 0)
        }
    }

    @Test func tokensPastTheGuessLimitAreRefusedUnchecked() async throws {
        try await Aria2RPCTests.withRPC { rpc, _, _ in
            let call = { (token: String) in #"{"jsonrpc":"2.0","id":1,"method":"aria2.getVersion","params":["token:\#(token)"]}"# }
            let batch = "[" + (Array(repeating: call("wrong"), count: 10) + [call("sekret")]).joined(separator: ",") + "]"
            let limited = rpc.handle(Array(batch.utf8), guessLimit: 10)
            #expect(limited.guesses == 10)
            #expect(!limited.authorized, "the secret after ten wrong tokens is not checked")
            #expect(rpc.handle(Array(batch.utf8), guessLimit: 11).authorized)
        }
    }

    @Test func aBatchOverTheLimitRunsNothing() async throws {
        try await Aria2RPCTests.withRPC { rpc, service, _ in
            let add = #"{"jsonrpc":"2.0","id":1,"method":"aria2.addUri","params":["token:sekret",["http://127.0.0.1:1/a"],{"pause":"true"}]}"#
            let over = "[" + Array(repeating: add, count: Aria2RPC.maximumBatchCalls + 1).joined(separator: ",") + "]"
            let (status, answer) = Aria2RPCTests.send(rpc, over)
            #expect(answer.object?["error"]?.object?["code"] == -32600)
            #expect(status == 400)
            #expect(service.statistics.waiting == 0)
            let multicall = Aria2RPCTests.call(rpc, "system.multicall", [.array(Array(repeating: [
                "methodName": "aria2.addUri", "params": ["token:sekret", ["http://127.0.0.1:1/b"], ["pause": "true"]],
            ], count: Aria2RPC.maximumBatchCalls + 1))])
            #expect(multicall.1.object?["error"] != nil)
            #expect(service.statistics.waiting == 0)
        }
    }

    @Test func anUnauthenticatedAnswerStaysWithinItsBudget() async throws {
        try await Aria2RPCTests.withRPC { rpc, _, _ in
            let list = #"{"jsonrpc":"2.0","id":1,"method":"system.listMethods"}"#
            var sizes: [Int] = []
            for count in [1_000, (2 << 20) / (list.utf8.count + 1)] {
                let body = "[" + Array(repeating: list, count: count).joined(separator: ",") + "]"
                let reply = rpc.handle(Array(body.utf8))
                sizes.append(reply.body.count)
                #expect(reply.body.count <= Aria2RPC.unauthenticatedAnswerBytes, "\(count) calls: \(reply.body.count) bytes")
            }
            let nested = #"{"jsonrpc":"2.0","id":1,"method":"system.multicall","params":[["#
                + Array(repeating: #"{"methodName":"system.listMethods"}"#, count: 1_000).joined(separator: ",") + "]]}"
            let batch = "[" + Array(repeating: nested, count: 50).joined(separator: ",") + "]"
            let reply = rpc.handle(Array(batch.utf8))
            #expect(reply.body.count <= Aria2RPC.unauthenticatedAnswerBytes)
            let id = String(repeating: "i", count: 100_000)
            #expect(rpc.handle(Array(#"{"jsonrpc":"2.0","id":"\#(id)","method":"system.listMethods"}"#.utf8)).body.count
                <= Aria2RPC.unauthenticatedAnswerBytes)
            let authenticated = "[" + #"{"jsonrpc":"2.0","id":0,"method":"aria2.getVersion","params":["token:sekret"]}"# + "," + Array(repeating: list, count: 999).joined(separator: ",") + "]"
            #expect(rpc.handle(Array(authenticated.utf8)).body.count > Aria2RPC.unauthenticatedAnswerBytes,
                    "a request with the token is answered whole")
            print("unauthenticated answers: \(sizes) bytes")
        }
    }
}

/// The throttle's schedule with a fake clock: how many wrong tokens a second it answers.
@Suite struct AuthThrottleScheduleTests {
    @Test func everyLoopbackAddressIsOneBudget() {
        let loopback = ["127.0.0.1", "127.0.0.2", "127.255.1.9", "::1", "::ffff:127.0.0.3"].map(AuthThrottle.budgetKey(for:))
        #expect(Set(loopback).count == 1)
        #expect(AuthThrottle.budgetKey(for: "192.0.2.1") != loopback[0])
        #expect(AuthThrottle.budgetKey(for: "192.0.2.1") != AuthThrottle.budgetKey(for: "192.0.2.2"))
    }

    @Test func twoHundredGuessesFromManyLoopbackAddressesTakeTwentySeconds() {
        var schedule = AuthThrottle.Schedule(minimumDelay: .seconds(1), interval: .milliseconds(100))
        let start = ContinuousClock.now
        var last = start
        var now = start
        // 50 guesses from each of four addresses: a batch of 25 and five of 5, all at once.
        for (index, peer) in ["127.0.0.1", "127.0.0.2", "::1", "127.0.0.9"].enumerated() {
            let key = AuthThrottle.budgetKey(for: peer)
            let answer = schedule.answerTime(guesses: 25, key: key, now: now)
            #expect(answer >= now + .seconds(1))
            last = max(last, answer)
            for _ in 0..<5 {
                last = max(last, schedule.answerTime(guesses: 5, key: key, now: now))
            }
            now += .milliseconds(10 * (index + 1))
        }
        #expect(last - start >= .seconds(20), "200 guesses answered within \(last - start)")
        #expect(last - start <= .seconds(21))
    }

    @Test func checksWaitWhileTheBudgetIsSpentAWindowAhead() {
        var schedule = AuthThrottle.Schedule(minimumDelay: .seconds(1), interval: .milliseconds(100), window: .seconds(1))
        let start = ContinuousClock.now
        let admitted = (0..<30).filter { _ in schedule.admit(key: "loopback", now: start) }.count
        #expect(admitted == 10, "a window's worth of checks at once, then none")
        #expect(schedule.admissionTime(key: "loopback") == start + .milliseconds(100))
        let later = schedule.admit(key: "loopback", now: start + .milliseconds(100))
        let tooSoon = schedule.admit(key: "loopback", now: start + .milliseconds(150))
        let other = schedule.admit(key: "192.0.2.1", now: start)
        #expect(later && !tooSoon, "then one a tenth of a second")
        #expect(other, "another address has its own budget")
        _ = schedule.answerTime(guesses: 10, key: "loopback", now: start + .milliseconds(200))
        #expect(schedule.admissionTime(key: "loopback") == start + .milliseconds(1_200), "wrong tokens push the next check back")
        #expect(schedule.guessesPerRequest == 10)
        var clean = AuthThrottle.Schedule(minimumDelay: .seconds(1), interval: .milliseconds(100), window: .seconds(1))
        var admissions = 0
        for _ in 0..<100 where clean.admit(key: "loopback", now: start) {
            admissions += 1
            clean.refund(key: "loopback", now: start)
        }
        #expect(admissions == 100)
        #expect((clean.admissionTime(key: "loopback") ?? start) <= start, "checks that found the right token cost nothing")
    }

    @Test func theDelayGrowsWithTheGuessesAndRecovers() {
        var schedule = AuthThrottle.Schedule(minimumDelay: .seconds(1), interval: .milliseconds(100))
        let start = ContinuousClock.now
        let one = schedule.answerTime(guesses: 1, key: "loopback", now: start)
        let many = schedule.answerTime(guesses: 100, key: "loopback", now: start)
        #expect(one == start + .seconds(1))
        #expect(many >= start + .milliseconds(10_100))
        let other = schedule.answerTime(guesses: 1, key: "192.0.2.1", now: start)
        #expect(other == start + .seconds(1), "another address has its own budget")
        let later = start + .seconds(60)
        #expect(schedule.answerTime(guesses: 1, key: "loopback", now: later) == later + .seconds(1))
    }
}
