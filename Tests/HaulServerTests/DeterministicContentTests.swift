import Foundation
@testable import HaulServer
import HaulTestSupport
import Testing

@Suite(.throttled) struct DeterministicContentTests {
    @Test func bytesAgreeWithByteAtAcrossThePeriod() {
        let content = HaulServer.content(seed: 7)
        let period = Int64(DeterministicContent.period)
        let range = (period - 10)..<(2 * period + 10)
        let bytes = content.bytes(range)
        #expect(bytes.count == range.count)
        #expect(zip(range, bytes).allSatisfy { content.byte(at: $0) == $1 })
        #expect(content.byte(at: 5) == content.byte(at: 5 + period))
    }

    @Test func seedsGiveDifferentContent() {
        let a = HaulServer.content(seed: 0).bytes(0..<4096)
        let b = HaulServer.content(seed: 1).bytes(0..<4096)
        #expect(a != b)
        #expect(a == DeterministicContent(seed: 0).bytes(0..<4096))
        // Not a constant or tiny cycle: many distinct values.
        #expect(Set(a).count > 200)
    }

    @Test func fillWritesEveryByteFromAnOffset() {
        let content = HaulServer.content(seed: 3)
        var buffer = [UInt8](repeating: 0, count: 200_000)
        buffer.withUnsafeMutableBytes { content.fill($0, from: 123_456) }
        #expect(buffer == content.bytes(123_456..<323_456))
    }

    @Test func sha256MatchesTheOpenSSLCommand() async throws {
        let content = HaulServer.content(seed: 2)
        let length: Int64 = 300_000
        try await withTemporaryDirectory { dir in
            let file = dir.appendingPathComponent("content")
            try Data(content.bytes(0..<length)).write(to: file)
            let outcome = try await runChildProcess(URL(fileURLWithPath: "/usr/bin/env"), ["openssl", "dgst", "-sha256", "-r", file.path])
            let output = String(decoding: outcome.standardOutput, as: UTF8.self)
            let expected = output.split(separator: " ").first.map(String.init)
            #expect(content.sha256Hex(length: length) == expected)
        }
    }
}

@Suite struct TestSupportTests {
    @Test func temporaryDirectoryIsFreshAndRemoved() async throws {
        let kept = try await withTemporaryDirectory { dir -> URL in
            await Task.yield()
            #expect(listFiles(dir).isEmpty)
            try Data("x".utf8).write(to: dir.appendingPathComponent("b.txt"))
            try Data("y".utf8).write(to: dir.appendingPathComponent("a.txt"))
            #expect(listFiles(dir) == ["a.txt", "b.txt"])
            return dir
        }
        #expect(!FileManager.default.fileExists(atPath: kept.path))
        let synchronous = withTemporaryDirectory { dir in dir }
        #expect(!FileManager.default.fileExists(atPath: synchronous.path))
    }
}
