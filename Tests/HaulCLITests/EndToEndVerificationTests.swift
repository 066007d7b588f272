import Foundation
import HaulServer
import HaulTestSupport
import Testing

/// `--checksum`, server digests, and `s3://` / `oss://` URLs with `--endpoint`, run as a process.
@Suite(.throttled, .timeLimit(.minutes(3)))
struct EndToEndVerificationTests {
    static let size = 1_500_000

    static func sha256Hex(_ data: Data) async throws -> String {
        // The expected digest from the system's openssl, independent of Haul's own code.
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("haul-sha-\(UUID().uuidString)")
        try data.write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let outcome = try await runChildProcess(URL(fileURLWithPath: "/usr/bin/env"), ["openssl", "dgst", "-sha256", "-r", file.path])
        return String(String(decoding: outcome.standardOutput, as: UTF8.self).split(separator: " ").first ?? "")
    }

    @Test func aRightChecksumFinishesAndTheJSONCarriesTheSHA256() async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { dir in
            let expected = try await Self.sha256Hex(served(Self.size))
            #expect(expected.count == 64)
            let outcome = try await haul(["--json", "--checksum=sha256=\(expected.uppercased())", "-d", dir.path,
                                          server.url("/bytes/\(Self.size)/c.bin")], in: dir)
            #expect(outcome.status == 0, "\(outcome.standardError)")
            let finished = try #require(outcome.jsonEvents().last)
            #expect(finished["event"] as? String == "finished")
            #expect(finished["sha256"] as? String == expected)
            #expect(listFiles(dir) == ["c.bin"])
        }
    }

    /// A file large enough to be written past the page cache, over 4 connections: the checksum
    /// is computed from the hasher's window as the pieces arrive in file order.
    @Test(arguments: [1, 4])
    func aLargeFileOverSeveralConnectionsIsCheckedAsItArrives(connections: Int) async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { dir in
            let size = 40 << 20
            let expected = try await Self.sha256Hex(served(size))
            let outcome = try await haul(["--json", "-x", "\(connections)", "--checksum=sha256=\(expected)", "-d", dir.path,
                                          server.url("/bytes/\(size)/large.bin")], in: dir, timeout: .seconds(120))
            #expect(outcome.status == 0, "\(outcome.standardError)")
            #expect(outcome.jsonEvents().last?["sha256"] as? String == expected)
            #expect(fileContents(dir.appendingPathComponent("large.bin")) == served(size))
            #expect(listFiles(dir) == ["large.bin"])
        }
    }

    @Test(arguments: [1, 4])
    func aWrongChecksumExitsNineAndTheFileNeverAppears(connections: Int) async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { dir in
            let wrong = String(repeating: "ab", count: 32)
            let outcome = try await haul(["--json", "-x", "\(connections)", "--checksum=sha256=\(wrong)", "-d", dir.path,
                                          server.url("/bytes/\(Self.size)/c.bin")], in: dir)
            #expect(outcome.status == 9)
            let failed = try #require(outcome.jsonEvents().last)
            #expect(failed["event"] as? String == "failed")
            #expect(jsonInteger(failed["exitCode"]) == 9)
            #expect((failed["error"] as? [String: Any])?["code"] as? String == "checksumMismatch")
            #expect(outcome.errorLines.count == 1 && outcome.standardError.contains("checksum mismatch"), "\(outcome.standardError)")
            #expect(listFiles(dir) == [])
        }
    }

    @Test func aServerDigestMismatchExitsNine() async throws {
        let server = try HaulServer()
        var resource = HaulServer.Resource(size: Int64(Self.size), seed: 2, etag: "\"d\"")
        resource.extraHeaders = [("Repr-Digest", "sha-256=:\(Data(repeating: 1, count: 32).base64EncodedString()):")]
        server.setResource("/digest.bin", resource)
        try await withTemporaryDirectory { dir in
            let outcome = try await haul(["-q", "-d", dir.path, server.url("/digest.bin")], in: dir)
            #expect(outcome.status == 9)
            #expect(outcome.standardError.contains("Repr-Digest"), "\(outcome.standardError)")
            #expect(listFiles(dir) == [])
        }
    }

    static let secret = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"

    @Test func anS3URLIsSignedWithTheEnvironmentsCredentialsAndNothingSecretIsPrinted() async throws {
        let server = try HaulServer()
        server.setResource("/bucket/data/s3.bin", HaulServer.Resource(size: Int64(Self.size), seed: 5, etag: "\"e\""))
        try await withTemporaryDirectory { dir in
            let process = try HaulProcess(["--json", "--endpoint=\(server.baseURL)", "-d", dir.path, "s3://bucket/data/s3.bin"],
                                          in: dir, environment: [
                                            "AWS_ACCESS_KEY_ID": "AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY": Self.secret,
                                            "AWS_SESSION_TOKEN": "TOKEN-SECRET-123", "AWS_REGION": "eu-central-1",
                                          ])
            let outcome = try await process.finish()
            #expect(outcome.status == 0, "\(outcome.standardError)")
            #expect(fileContents(dir.appendingPathComponent("s3.bin")) == served(Self.size, seed: 5))
            let sent = try #require(server.requests.first)
            #expect(sent.path == "/bucket/data/s3.bin")
            let signatures = server.requests.compactMap { $0.queryValue("X-Amz-Signature") }
            #expect(!signatures.isEmpty && signatures.count == server.requests.count)
            #expect(sent.queryValue("X-Amz-Credential")?.hasSuffix("/eu-central-1/s3/aws4_request") == true)
            let printed = outcome.standardOutput + outcome.standardError
            for hidden in [Self.secret, "TOKEN-SECRET-123"] + signatures {
                #expect(!printed.contains(hidden), "printed a secret: \(hidden)")
            }
        }
    }

    @Test func aRefusedS3RequestExitsSixWithoutShowingTheSignature() async throws {
        let server = try HaulServer()
        var resource = HaulServer.Resource(size: 1000, seed: 5)
        resource.gate = { _ in .init(status: 403, body: "<Error><Code>SignatureDoesNotMatch</Code></Error>") }
        server.setResource("/bucket/k.bin", resource)
        try await withTemporaryDirectory { dir in
            let process = try HaulProcess(["--endpoint=\(server.baseURL)", "-d", dir.path, "s3://bucket/k.bin"], in: dir,
                                          environment: ["AWS_ACCESS_KEY_ID": "AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY": Self.secret])
            let outcome = try await process.finish()
            #expect(outcome.status == 6)
            let signatures = server.requests.compactMap { $0.queryValue("X-Amz-Signature") }
            #expect(signatures.count == 1)
            for hidden in [Self.secret] + signatures { #expect(!outcome.standardError.contains(hidden)) }
            #expect(outcome.standardError.hasPrefix("haul: s3://bucket/k.bin: "), "\(outcome.standardError)")
        }
    }

    @Test func anOSSURLWithoutCredentialsIsAUsageError() async throws {
        try await withTemporaryDirectory { dir in
            let process = try HaulProcess(["oss://bucket/k.bin"], in: dir,
                                          environment: ["OSS_ACCESS_KEY_ID": "", "OSS_ACCESS_KEY_SECRET": ""])
            let outcome = try await process.finish()
            #expect(outcome.status == 2)
            #expect(outcome.standardError.contains("OSS_ACCESS_KEY_ID"), "\(outcome.standardError)")
        }
    }
}
