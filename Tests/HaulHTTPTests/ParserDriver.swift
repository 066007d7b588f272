import HaulTestSupport
@testable import HaulHTTP
import HaulCore

/// What a parser produced for a whole input: heads, body bytes, whether it ended.
struct ParseOutcome: Equatable {
    var heads: [ResponseHead] = []
    var body: [UInt8] = []
    var ended = false
}

/// Feeds `chunks` to `parser` as successive reads, following the calling contract, then EOF when asked.
func drive(_ parser: inout ResponseParser, chunks: [[UInt8]], eof: Bool = false) throws(HTTPClientError) -> ParseOutcome {
    var outcome = ParseOutcome()
    reads: for chunk in chunks {
        var failure: HTTPClientError?
        chunk.withUnsafeBytes { buffer in
            var offset = 0
            do throws(HTTPClientError) {
                while true {
                    let before = offset
                    let event = try parser.parse(buffer, offset: &offset)
                    precondition(offset >= before && offset <= buffer.count, "offset moved backwards or past the end")
                    switch event {
                    case .needMore:
                        precondition(offset == buffer.count, "needMore before consuming everything")
                        return
                    case .head(let head):
                        outcome.heads.append(head)
                    case .body(let range):
                        precondition(range.lowerBound >= before && range.upperBound == offset && !range.isEmpty)
                        outcome.body.append(contentsOf: buffer[range])
                    case .end:
                        outcome.ended = true
                        return
                    }
                }
            } catch {
                failure = error
            }
        }
        if let failure { throw failure }
        if outcome.ended { break reads }
    }
    if eof && !outcome.ended {
        let event = try parser.inputEnded()
        outcome.ended = event == .end
    }
    return outcome
}

/// Parses `bytes` delivered in one read.
func parseWhole(_ text: String, method: HTTPMethod = .get, eof: Bool = false,
                budget: HeaderBudget = HeaderBudget()) throws(HTTPClientError) -> ParseOutcome {
    var parser = ResponseParser(method: method, budget: budget)
    return try drive(&parser, chunks: [Array(text.utf8)], eof: eof)
}

/// Splits bytes into pieces at pseudo-random points (deterministic for a seed).
func randomSplits(_ bytes: [UInt8], seed: UInt64) -> [[UInt8]] {
    var generator = SplitMix64(seed: seed)
    var pieces: [[UInt8]] = []
    var index = 0
    while index < bytes.count {
        let length = Int(generator.next() % 17) + 1
        let end = min(bytes.count, index + length)
        pieces.append(Array(bytes[index..<end]))
        index = end
    }
    return pieces
}


/// Every event of one read, up to and including `.needMore` or `.end`.
func events(_ parser: inout ResponseParser, _ bytes: [UInt8]) throws -> [ResponseParser.Event] {
    var result: [ResponseParser.Event] = []
    var failure: HTTPClientError?
    bytes.withUnsafeBytes { buffer in
        var offset = 0
        do throws(HTTPClientError) {
            while true {
                let event = try parser.parse(buffer, offset: &offset)
                result.append(event)
                if event == .needMore || event == .end { return }
            }
        } catch {
            failure = error
        }
    }
    if let failure { throw failure }
    return result
}
