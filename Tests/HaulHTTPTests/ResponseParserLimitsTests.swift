import HaulTestSupport
import Testing
@testable import HaulHTTP
import HaulCore

/// Header byte and line limits of ``ResponseParser``, shared across heads.
@Suite struct ResponseParserLimitsTests {
    /// A head of exactly `lines` lines (status line and empty line included) and its byte count.
    static func head(lines: Int, status: Int = 200) -> String {
        var text = "HTTP/1.1 \(status) OK\r\n"
        for index in 0..<max(0, lines - 2) { text += "X-\(index): v\r\n" }
        return text + "\r\n"
    }

    @Test func aHeadExactlyAtTheByteLimitPassesAndOneByteMoreFails() throws {
        let text = Self.head(lines: 5)
        let size = text.utf8.count
        var exact = ResponseParser(method: .head, budget: HeaderBudget(bytes: size, lines: 100))
        let outcome = try drive(&exact, chunks: [Array(text.utf8)])
        #expect(outcome.heads.count == 1)
        #expect(exact.budget == HeaderBudget(bytes: 0, lines: 95))

        for split in [false, true] {
            var over = ResponseParser(method: .head, budget: HeaderBudget(bytes: size - 1, lines: 100))
            let bytes = Array(text.utf8)
            let error = #expect(throws: HTTPClientError.self) {
                try drive(&over, chunks: split ? bytes.map { [$0] } : [bytes])
            }
            #expect(error?.kind == .headersTooLarge)
        }
    }

    @Test func aHeadExactlyAtTheLineLimitPassesAndOneLineMoreFails() throws {
        let lines = 200
        var exact = ResponseParser(method: .head)
        #expect(try drive(&exact, chunks: [Array(Self.head(lines: lines).utf8)]).heads.count == 1)
        #expect(exact.budget.lines == 0)

        var over = ResponseParser(method: .head)
        let error = #expect(throws: HTTPClientError.self) { try drive(&over, chunks: [Array(Self.head(lines: lines + 1).utf8)]) }
        #expect(error?.kind == .headersTooLarge)
    }

    @Test func aHugeHeaderLineFailsAsSoonAsTheBudgetIsExceeded() {
        var parser = ResponseParser(method: .get)
        let start = Array("HTTP/1.1 200 OK\r\nX-Big: ".utf8)
        let filler = [UInt8](repeating: UInt8(ascii: "a"), count: 16 * 1024)
        var fed = 0
        let error = #expect(throws: HTTPClientError.self) {
            _ = try drive(&parser, chunks: [start])
            for _ in 0..<64 {  // up to 1 MiB, but it must stop after 64 KiB
                fed += filler.count
                _ = try drive(&parser, chunks: [filler])
            }
        }
        #expect(error?.kind == .headersTooLarge)
        #expect(fed <= 64 * 1024 + filler.count)
    }

    @Test func manyHeadersFailAtTheLineLimit() {
        var parser = ResponseParser(method: .get, budget: HeaderBudget(bytes: 10_000_000, lines: 200))
        var fedLines = 0
        let error = #expect(throws: HTTPClientError.self) {
            _ = try drive(&parser, chunks: [Array("HTTP/1.1 200 OK\r\n".utf8)])
            for _ in 0..<100_000 {
                fedLines += 1
                _ = try drive(&parser, chunks: [Array("A: b\r\n".utf8)])
            }
        }
        #expect(error?.kind == .headersTooLarge)
        #expect(fedLines == 200)
    }

    @Test func interimResponsesShareTheBudget() throws {
        let interim = "HTTP/1.1 100 Continue\r\n\r\n"
        let final = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"
        let total = interim.utf8.count + final.utf8.count
        var exact = ResponseParser(method: .get, budget: HeaderBudget(bytes: total, lines: 5))
        #expect(try drive(&exact, chunks: [Array((interim + final).utf8)]).ended)
        #expect(exact.budget == HeaderBudget(bytes: 0, lines: 0))

        var fewerBytes = ResponseParser(method: .get, budget: HeaderBudget(bytes: total - 1, lines: 5))
        #expect(throws: HTTPClientError.self) { try drive(&fewerBytes, chunks: [Array((interim + final).utf8)]) }
        var fewerLines = ResponseParser(method: .get, budget: HeaderBudget(bytes: total, lines: 4))
        #expect(throws: HTTPClientError.self) { try drive(&fewerLines, chunks: [Array((interim + final).utf8)]) }
    }

    @Test func theBudgetLeftIsPassedToTheNextHop() throws {
        let first = "HTTP/1.1 302 Found\r\nLocation: /b\r\nContent-Length: 0\r\n\r\n"
        let second = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"
        let budget = HeaderBudget(bytes: first.utf8.count + second.utf8.count, lines: 7)
        var hop1 = ResponseParser(method: .get, budget: budget)
        #expect(try drive(&hop1, chunks: [Array(first.utf8)]).ended)
        #expect(hop1.budget == HeaderBudget(bytes: second.utf8.count, lines: 3))

        var hop2 = ResponseParser(method: .get, budget: hop1.budget)
        #expect(try drive(&hop2, chunks: [Array(second.utf8)]).ended)

        var hop2Tight = ResponseParser(method: .get, budget: HeaderBudget(bytes: second.utf8.count, lines: 2))
        let error = #expect(throws: HTTPClientError.self) { try drive(&hop2Tight, chunks: [Array(second.utf8)]) }
        #expect(error?.kind == .headersTooLarge)
    }

    @Test func theDefaultBudgetIs64KiBAnd200Lines() {
        #expect(HeaderBudget() == HeaderBudget(bytes: 65536, lines: 200))
    }
}
