import Foundation
import HaulServer
import HaulTestSupport
import Testing
@testable import Haul
@testable import HaulSigning
import HaulCore

/// A signing service for tests: every call returns `?X-Amz-Signature=SECRETSIG<n>&t=<issued ms>`,
/// valid for four seconds; `stale(n)` decides which calls hand out a URL issued a minute ago
/// (a vendor's cache, a sleeping laptop).
final class TestSigningService: Sendable {
    private let calls = SharedStateLock(0)
    private let stale: @Sendable (Int) -> Bool

    init(stale: @escaping @Sendable (Int) -> Bool = { _ in false }) {
        self.stale = stale
    }

    var callCount: Int { calls.withLock { $0 } }

    func signer(for server: HaulServer, path: String) -> ClosureURLSigner {
        ClosureURLSigner { [self] _, now in
            let n = calls.withLock { count in
                count += 1
                return count
            }
            let issued = stale(n) ? now.addingTimeInterval(-60) : now
            let millis = Int64(issued.timeIntervalSince1970 * 1000)
            let signed = URL(string: server.url("\(path)?X-Amz-Signature=SECRETSIG\(n)&t=\(millis)"))!
            return SignedRequest(url: signed, signedAt: issued, expiresAt: issued.addingTimeInterval(4))
        }
    }

    /// The gate of a server that accepts a signature for four seconds after it was issued.
    static let gate: @Sendable (RecordedRequest) -> HaulServer.Resource.Refusal? = { request in
        guard request.queryValue("X-Amz-Signature") != nil, let t = request.queryValue("t").flatMap(Int64.init) else {
            return HaulServer.Resource.Refusal(status: 403, body: accessDenied("Access Denied"))
        }
        if Int64(Date().timeIntervalSince1970 * 1000) - t > 4000 {
            return HaulServer.Resource.Refusal(status: 403, body: accessDenied("Request has expired"))
        }
        return nil
    }

    static func accessDenied(_ message: String) -> String {
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>AccessDenied</Code><Message>\(message)</Message></Error>"
    }
}

/// `DownloadRequest.signer`: a fresh signature for every request, renewal after an expired
/// signature, other 403s refused, clock skew reported, signatures never shown.
///
/// Exclusive: paced downloads outlive signatures that expire on the wall clock.
@Suite("Signed URLs", .exclusive, .serialized, .timeLimit(.minutes(1)))
struct SignerTests {
    static let size: Int64 = 6_000_000

    static func signedResource(rate: Int = 0) -> HaulServer.Resource {
        var resource = HaulServer.Resource(size: size, seed: 4, etag: "\"s1\"", rate: rate)
        resource.gate = TestSigningService.gate
        return resource
    }

    @Test(arguments: [1, 4])
    func everyRequestIsSignedAfresh(connections: Int) async throws {
        let server = try HaulServer()
        server.setResource("/file.bin", Self.signedResource())
        let service = TestSigningService()
        try await withTemporaryDirectory { (dir) async throws in
            let request = DownloadRequest(url: URL(string: "https://storage.invalid/file.bin")!,
                                          signer: service.signer(for: server, path: "/file.bin"))
            let result = try await resumeDownloader(connections: connections).file(from: request, to: .directory(dir))
            #expect(try contents(result.fileURL) == HaulServer.content(seed: 4).bytes(0..<Self.size))
            let signatures = server.requests.compactMap { $0.queryValue("X-Amz-Signature") }
            #expect(signatures.count == server.requests.count)
            #expect(Set(signatures).count == signatures.count, "a signature was sent twice: \(signatures)")
            #expect(service.callCount == server.requests.count + 1, "one signing to learn the URL, then one per request")
        }
    }

    @Test(arguments: [1, 4])
    func anExpiredSignatureIsRenewedAndNothingIsFetchedTwice(connections: Int) async throws {
        let server = try HaulServer()
        server.setResource("/file.bin", Self.signedResource())
        // Calls 2 (the first request) and 4 (a segment's, with several connections) hand out a
        // stale URL: those requests are refused, then renewed (renewals come later, so are fresh).
        let service = TestSigningService(stale: { $0 == 2 || $0 == 4 })
        try await withTemporaryDirectory { (dir) async throws in
            let request = DownloadRequest(url: URL(string: "https://storage.invalid/file.bin")!,
                                          signer: service.signer(for: server, path: "/file.bin"))
            let download = resumeDownloader(connections: connections).download(request, to: .directory(dir))
            let run = await collect(download)
            #expect(run.error == nil, "\(run.error?.description ?? "")")
            #expect(try contents(dir.appendingPathComponent("file.bin")) == HaulServer.content(seed: 4).bytes(0..<Self.size))
            let refused = server.requests.filter(isStale)
            #expect(!refused.isEmpty, "no request was refused: the test does not test renewal")
            #expect(run.names.first == "started" && !run.names.contains("retrying"), "renewal is not a retry: \(run.names)")
            // One connection: exactly the file. (With several, the open-ended first response may write
            // more than its segment into the socket before it is closed, so the count is not exact.)
            if connections == 1 { #expect(server.bodyBytesSent == Self.size) }
            #expect(service.callCount == server.requests.count + 1)
        }
    }

    @Test func renewingRunsOncePerRequestThenTheRefusalStands() async throws {
        let server = try HaulServer()
        server.setResource("/file.bin", Self.signedResource())
        let service = TestSigningService(stale: { $0 > 1 })
        try await withTemporaryDirectory { (dir) async throws in
            let request = DownloadRequest(url: URL(string: "https://storage.invalid/file.bin")!,
                                          signer: service.signer(for: server, path: "/file.bin"))
            let error = await expectFailure(resumeDownloader(), request, to: .directory(dir))
            #expect(error?.code == .authenticationRefused)
            #expect(error?.code.exitStatus == 6)
            #expect(server.requests.count == 2, "one request, one renewal")
            #expect(listFiles(dir) == [])
        }
    }

    @Test func anotherForbiddenIsNotRenewed() async throws {
        let server = try HaulServer()
        var resource = Self.signedResource()
        resource.gate = { _ in HaulServer.Resource.Refusal(status: 403, body: TestSigningService.accessDenied("Access Denied")) }
        server.setResource("/file.bin", resource)
        let service = TestSigningService()
        try await withTemporaryDirectory { (dir) async throws in
            let request = DownloadRequest(url: URL(string: "https://storage.invalid/file.bin")!,
                                          signer: service.signer(for: server, path: "/file.bin"))
            let error = await expectFailure(resumeDownloader(), request, to: .directory(dir))
            #expect(error?.code == .authenticationRefused)
            #expect(server.requests.count == 1)
            #expect(error.map { !$0.message.contains("SECRETSIG") } == true)
        }
    }

    @Test func aServerClockFarFromOursIsReportedOnceAndSignaturesNeverShow() async throws {
        let server = try HaulServer()
        var resource = Self.signedResource()
        resource.extraHeaders = [("Date", "Mon, 01 Jan 2024 00:00:00 GMT")]
        server.setResource("/file.bin", resource)
        let service = TestSigningService()
        try await withTemporaryDirectory { (dir) async throws in
            let request = DownloadRequest(url: URL(string: "https://storage.invalid/file.bin")!,
                                          signer: service.signer(for: server, path: "/file.bin"))
            let run = await collect(resumeDownloader(connections: 4).download(request, to: .directory(dir)))
            #expect(run.error == nil)
            let warnings = run.events.compactMap { if case .warning(let text) = $0 { text } else { nil } }
            #expect(warnings.count == 1, "\(warnings)")
            #expect(warnings.first?.contains("clock") == true)
            #expect(run.started.map { !$0.redactedURL.contains("SECRETSIG") } == true, "\(run.started?.redactedURL ?? "")")
        }
    }

    @Test func httpDatesParse() {
        #expect(HTTPDate.secondsSince1970("Sun, 06 Nov 1994 08:49:37 GMT") == 784_111_777)
        #expect(HTTPDate.secondsSince1970("Mon, 01 Jan 2024 00:00:00 GMT") == 1_704_067_200)
        #expect(HTTPDate.secondsSince1970("Sunday, 06-Nov-94 08:49:37 GMT") == nil)
        #expect(HTTPDate.secondsSince1970("Sun, 06 Nov 1994 25:49:37 GMT") == nil)
    }

    @Test func anS3URLIsPresignedForTheEndpoint() async throws {
        let server = try HaulServer()
        server.setResource("/bucket/dir/object.bin", HaulServer.Resource(size: 200_000, seed: 3, etag: "\"o\""))
        let credentials = S3Presigner.Credentials(accessKeyID: "AKIDEXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
                                                  sessionToken: "SESSIONTOKEN")
        let signer = S3Presigner(credentials: credentials, region: "eu-west-3", endpoint: URL(string: server.baseURL)!)
        try await withTemporaryDirectory { (dir) async throws in
            let request = DownloadRequest(url: URL(string: "s3://bucket/dir/object.bin")!, signer: signer)
            let result = try await resumeDownloader().file(from: request, to: .directory(dir))
            #expect(result.fileURL.lastPathComponent == "object.bin")
            let sent = try #require(server.requests.first)
            #expect(sent.path == "/bucket/dir/object.bin")
            #expect(sent.queryValue("X-Amz-Algorithm") == "AWS4-HMAC-SHA256")
            #expect(sent.queryValue("X-Amz-Credential")?.hasPrefix("AKIDEXAMPLE/") == true)
            #expect(sent.queryValue("X-Amz-Credential")?.hasSuffix("/eu-west-3/s3/aws4_request") == true)
            #expect(sent.queryValue("X-Amz-Security-Token") == "SESSIONTOKEN")
            #expect(sent.queryValue("X-Amz-Signature")?.count == 64)
        }
    }
}

/// Whether a request carried one of the service's stale signatures (the gate refused it).
private func isStale(_ request: RecordedRequest) -> Bool {
    guard let t = request.queryValue("t").flatMap(Int64.init) else { return false }
    return Int64(Date().timeIntervalSince1970 * 1000) - t > 30_000
}
