import Foundation
import HaulTestSupport
import Testing
@testable import Haul
@testable import HaulSigning

@Suite struct S3PresignerTests {
    static let credentials = S3Presigner.Credentials(
        accessKeyID: "AKIAIOSFODNN7EXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY")
    /// 2013-05-24T00:00:00Z, the signing time of the AWS example.
    static let exampleTime = Date(timeIntervalSince1970: 1_369_353_600)

    static func parameters(_ url: URL) -> [String: String] {
        let query = url.absoluteString.split(separator: "?", maxSplits: 1).last.map(String.init) ?? ""
        var result: [String: String] = [:]
        for pair in query.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1)
            result[String(parts[0])] = parts.count > 1 ? String(parts[1]) : ""
        }
        return result
    }

    @Test func awsDocumentedPresignedURL() throws {
        // Source: "Authenticating Requests: Using Query Parameters (AWS Signature Version 4)",
        // section "An example", https://docs.aws.amazon.com/AmazonS3/latest/API/sigv4-query-string-auth.html
        // GET examplebucket/test.txt, us-east-1, 20130524T000000Z, expires 86400; the page gives the
        // signature aeeed9bb… (and the hash of the canonical request in its string to sign, 3bfa2928…).
        let signer = S3Presigner(credentials: Self.credentials, region: "us-east-1", expiresIn: 86400)
        let signed = try signer.presign(try #require(URL(string: "https://examplebucket.s3.amazonaws.com/test.txt")), now: Self.exampleTime)
        #expect(signed.url.absoluteString == "https://examplebucket.s3.amazonaws.com/test.txt"
            + "?X-Amz-Algorithm=AWS4-HMAC-SHA256"
            + "&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-east-1%2Fs3%2Faws4_request"
            + "&X-Amz-Date=20130524T000000Z&X-Amz-Expires=86400&X-Amz-SignedHeaders=host"
            + "&X-Amz-Signature=aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404")
        #expect(signed.signedAt == Self.exampleTime)
        #expect(signed.expiresAt == Self.exampleTime.addingTimeInterval(86400))
        #expect(signed.lifetime == .seconds(86400))
        #expect(signed.headers.isEmpty)
    }

    @Test func awsDocumentedStringToSign() {
        // Same page: the string to sign of the example, built from its canonical request.
        let canonicalRequest = """
            GET
            /test.txt
            X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20130524T000000Z&X-Amz-Expires=86400&X-Amz-SignedHeaders=host
            host:examplebucket.s3.amazonaws.com

            host
            UNSIGNED-PAYLOAD
            """
        #expect(S3Presigner.stringToSign(timestamp: "20130524T000000Z", scope: "20130524/us-east-1/s3/aws4_request",
                                         canonicalRequest: canonicalRequest)
            == "AWS4-HMAC-SHA256\n20130524T000000Z\n20130524/us-east-1/s3/aws4_request\n3bfa292879f6447bbcda7001decf97f4a54dc650c8942174ae0a9121cf58ad04")
    }

    // Cross-checks computed with botocore 1.43.11 (generate_presigned_url, s3v4, the clock fixed
    // at the AWS example's time): path style on a custom endpoint with a session token and a key
    // needing encoding; another region; a query parameter of the object URL.
    @Test func pathStyleCustomEndpointWithSessionTokenMatchesBotocore() throws {
        let credentials = S3Presigner.Credentials(accessKeyID: Self.credentials.accessKeyID,
                                                  secretAccessKey: Self.credentials.secretAccessKey,
                                                  sessionToken: "IQoJb3JpZ2luX2VjEXAMPLETOKEN/+=")
        let signer = S3Presigner(credentials: credentials, endpoint: URL(string: "http://127.0.0.1:9000"), expiresIn: 86400)
        let signed = try signer.presign(try #require(URL(string: "s3://my-bucket/dir/a%20file+%C3%A9.txt")), now: Self.exampleTime)
        #expect(signed.url.absoluteString == "http://127.0.0.1:9000/my-bucket/dir/a%20file%2B%C3%A9.txt"
            + "?X-Amz-Algorithm=AWS4-HMAC-SHA256"
            + "&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-east-1%2Fs3%2Faws4_request"
            + "&X-Amz-Date=20130524T000000Z&X-Amz-Expires=86400"
            + "&X-Amz-Security-Token=IQoJb3JpZ2luX2VjEXAMPLETOKEN%2F%2B%3D&X-Amz-SignedHeaders=host"
            + "&X-Amz-Signature=9b2cb54e5a1d25edc29cb432b8858b36d9f4d23b02e0f6b2a52a1f61218ef690")
    }

    @Test func virtualHostedInAnotherRegionMatchesBotocore() throws {
        let signer = S3Presigner(credentials: Self.credentials, region: "eu-west-3", expiresIn: 86400)
        let signed = try signer.presign(try #require(URL(string: "s3://examplebucket/test.txt")), now: Self.exampleTime)
        #expect(signed.url.absoluteString.hasPrefix("https://examplebucket.s3.eu-west-3.amazonaws.com/test.txt?"))
        #expect(Self.parameters(signed.url)["X-Amz-Signature"] == "8dd7eb78ba3aeaaa04339b6cbe77a74904946e5ffe9952590543419709d80bc2")
    }

    @Test func ownQueryParametersAreSignedMatchesBotocore() throws {
        let signer = S3Presigner(credentials: Self.credentials, expiresIn: 86400)
        let url = try #require(URL(string: "https://examplebucket.s3.amazonaws.com/test.txt?versionId=3%2FL4kqtJlcpXroDTDmJ%2BrmSpXd3dIbrHY"))
        let parameters = Self.parameters(try signer.presign(url, now: Self.exampleTime).url)
        #expect(parameters["versionId"] == "3%2FL4kqtJlcpXroDTDmJ%2BrmSpXd3dIbrHY")
        #expect(parameters["X-Amz-Signature"] == "29224dc93273045d900c244bce0d878b5e9095707b07fe49ca6e053d4d78f8e8")
    }

    @Test func resigningReplacesTheOldSignature() throws {
        let signer = S3Presigner(credentials: Self.credentials, expiresIn: 86400)
        let first = try signer.presign(try #require(URL(string: "https://examplebucket.s3.amazonaws.com/test.txt")), now: Self.exampleTime)
        let again = try signer.presign(first.url, now: Self.exampleTime)
        #expect(again.url == first.url)
        let later = try signer.presign(first.url, now: Self.exampleTime.addingTimeInterval(60))
        #expect(Self.parameters(later.url)["X-Amz-Date"] == "20130524T000100Z")
        #expect(Self.parameters(later.url)["X-Amz-Signature"] != Self.parameters(first.url)["X-Amz-Signature"])
        #expect(later.url.absoluteString.components(separatedBy: "X-Amz-Signature=").count == 2)
    }

    @Test func objectURLsForEachAddressingStyle() throws {
        let aws = S3Presigner(credentials: Self.credentials, region: "ap-south-1")
        #expect(try aws.objectURL(bucket: "photos", key: "2024/a b.jpg").absoluteString
            == "https://photos.s3.ap-south-1.amazonaws.com/2024/a%20b.jpg")
        // A bucket with dots would break the wildcard certificate: path style.
        #expect(try aws.objectURL(bucket: "my.photos", key: "k").absoluteString == "https://s3.ap-south-1.amazonaws.com/my.photos/k")
        let forcedPath = S3Presigner(credentials: Self.credentials, addressingStyle: .path)
        #expect(try forcedPath.objectURL(bucket: "photos", key: "k").absoluteString == "https://s3.us-east-1.amazonaws.com/photos/k")
        let minio = S3Presigner(credentials: Self.credentials, endpoint: URL(string: "http://[::1]:9000/"))
        #expect(try minio.objectURL(bucket: "b", key: "x/y").absoluteString == "http://[::1]:9000/b/x/y")
        let hosted = S3Presigner(credentials: Self.credentials, endpoint: URL(string: "https://storage.example"), addressingStyle: .virtualHosted)
        #expect(try hosted.objectURL(bucket: "b", key: "k").absoluteString == "https://b.storage.example/k")
    }

    @Test(arguments: ["s3://", "s3://bucket", "s3://bucket/", "s3:///key", "ftp://host/key"])
    func urlsItCannotSign(text: String) async throws {
        let signer = S3Presigner(credentials: Self.credentials)
        let url = try #require(URL(string: text))
        await #expect(throws: DownloadError.self) { try await signer.sign(url, now: Self.exampleTime) }
    }

    @Test func expiryIsClampedAndReported() throws {
        #expect(S3Presigner(credentials: Self.credentials, expiresIn: 10_000_000).expiresIn == 604_800)
        #expect(S3Presigner(credentials: Self.credentials, expiresIn: 0).expiresIn == 1)
        let signed = try S3Presigner(credentials: Self.credentials, expiresIn: 60)
            .presign(try #require(URL(string: "s3://bucket/key")), now: Self.exampleTime)
        #expect(!signed.isExpired(at: Self.exampleTime.addingTimeInterval(59)))
        #expect(signed.isExpired(at: Self.exampleTime.addingTimeInterval(55), margin: .seconds(5)))
        #expect(signed.isExpired(at: Self.exampleTime.addingTimeInterval(60)))
    }

    @Test func credentialsNeverDescribeTheirSecrets() {
        let credentials = S3Presigner.Credentials(accessKeyID: "AKID", secretAccessKey: "s3cr3t", sessionToken: "t0ken")
        let text = "\(credentials) \(S3Presigner(credentials: credentials))"
        #expect(text.contains("AKID"))
        #expect(!text.contains("s3cr3t"))
        #expect(!text.contains("t0ken"))
    }
}
