import Foundation
import HaulTestSupport
import Testing
@testable import Haul
@testable import HaulSigning

@Suite struct OSSSignerTests {
    // The AccessKey pair of Aliyun's V1 signature examples.
    static let documented = OSSSigner.Credentials(accessKeyID: "44CF9590006BF252F707",
                                                  accessKeySecret: "OtxrzxIsfpFjA7SwPzILwy8Bw21TLhquhboDYROV")

    @Test func v1DocumentedSignature() {
        // Source: OSS "Include a V1 signature in the Authorization header",
        // https://www.alibabacloud.com/help/en/oss/developer-reference/include-signatures-in-the-authorization-header
        // (help.aliyun.com/document_detail/31951.html): the PUT /nelson example signs to 26NBxoKdsyly4EDv6inkoDft/yA=.
        // URL signing uses the same string to sign with Expires in place of Date.
        let stringToSign = OSSSigner.v1StringToSign(
            verb: "PUT", contentMD5: "ODBGOERFMDMzQTczRUY3NUE3NzA5QzdFNUYzMDQxNEM=", contentType: "text/html",
            expires: "Thu, 17 Nov 2005 18:49:58 GMT",
            ossHeaders: [("X-OSS-Meta-Author", "foo@bar.com"), ("X-OSS-Magic", "abracadabra"), ("Content-Type", "text/html")],
            resource: "/oss-example/nelson")
        #expect(stringToSign == "PUT\nODBGOERFMDMzQTczRUY3NUE3NzA5QzdFNUYzMDQxNEM=\ntext/html\nThu, 17 Nov 2005 18:49:58 GMT\n"
            + "x-oss-magic:abracadabra\nx-oss-meta-author:foo@bar.com\n/oss-example/nelson")
        #expect(OSSSigner.v1Signature(stringToSign, secret: Self.documented.accessKeySecret) == "26NBxoKdsyly4EDv6inkoDft/yA=")
    }

    @Test func v1URL() throws {
        // Source: OSS "Include a V1 signature in a URL",
        // https://www.alibabacloud.com/help/en/oss/developer-reference/ddd-signatures-to-urls : GET
        // oss-example/oss-api.pdf, Expires=1141889120 (signed at 1141889060, valid 60 s). The page's
        // printed Signature does not follow from its own inputs; EwaNTn1erJGkimiJ9WmXgwnANLc= is the
        // value the documented formula gives, as the Go and Ruby OSS clients' tests also expect.
        let signer = OSSSigner(credentials: Self.documented, version: .v1, region: "cn-hangzhou", expiresIn: 60)
        let signed = try signer.presign(try #require(URL(string: "oss://oss-example/oss-api.pdf")),
                                        now: Date(timeIntervalSince1970: 1_141_889_060))
        #expect(signed.url.absoluteString == "https://oss-example.oss-cn-hangzhou.aliyuncs.com/oss-api.pdf"
            + "?OSSAccessKeyId=44CF9590006BF252F707&Expires=1141889120&Signature=EwaNTn1erJGkimiJ9WmXgwnANLc%3D")
        #expect(signed.expiresAt == Date(timeIntervalSince1970: 1_141_889_120))
    }

    @Test func v1SecurityTokenIsASignedSubresource() throws {
        let credentials = OSSSigner.Credentials(accessKeyID: "STS.id", accessKeySecret: "secret", securityToken: "tok/en+")
        let signer = OSSSigner(credentials: credentials, version: .v1, expiresIn: 60)
        let now = Date(timeIntervalSince1970: 1_700_000_000)
        let signed = try signer.presign(try #require(URL(string: "https://b.oss-cn-hangzhou.aliyuncs.com/k.txt")), now: now)
        let expected = OSSSigner.v1Signature("GET\n\n\n1700000060\n/b/k.txt?security-token=tok/en+", secret: "secret")
        #expect(signed.url.absoluteString == "https://b.oss-cn-hangzhou.aliyuncs.com/k.txt?OSSAccessKeyId=STS.id"
            + "&Expires=1700000060&Signature=\(SigningTarget.encode(expected))&security-token=tok%2Fen%2B")
    }

    // Source: the V4 query-signing tests of Aliyun's Python SDK v2 (alibabacloud-oss-python-sdk-v2,
    // tests/unit/signer/test_v4.py, test_auth_query and test_auth_query_with_token), which follow
    // https://www.alibabacloud.com/help/en/oss/developer-reference/add-signatures-to-urls :
    // PUT bucket/"1234+-/123/1.txt" with awkward parameter names, signed headers, valid 599 s.
    static let v4Parameters: [(name: String, value: String)] = [
        ("param1", "value1"), ("+param1", "value3"), ("|param1", "value4"), ("+param2", ""), ("|param2", ""), ("param2", ""),
    ]
    static let v4Headers = [("x-oss-head1", "value"), ("abc", "value"), ("ZAbc", "value"), ("XYZ", "value"),
                            ("content-type", "application/octet-stream")]

    @Test(arguments: [
        (nil as String?, 1_702_781_677 as Int64, "20231217T025437Z", "a39966c61718be0d5b14e668088b3fa07601033f6518ac7b523100014269c0fe"),
        ("token", 1_702_785_388, "20231217T035628Z", "3817ac9d206cd6dfc90f1c09c00be45005602e55898f26f5ddb06d7892e1f8b5"),
    ])
    func v4PublishedQueryVectors(token: String?, seconds: Int64, timestamp: String, signature: String) throws {
        let signer = OSSSigner(credentials: .init(accessKeyID: "ak", accessKeySecret: "sk", securityToken: token),
                               region: "cn-hangzhou", expiresIn: 599)
        let time = SigningTime(Date(timeIntervalSince1970: Double(seconds)))
        #expect(time.timestamp == timestamp)
        let query = signer.v4Query(method: "PUT", bucket: "bucket", key: "1234+-/123/1.txt", parameters: Self.v4Parameters,
                                   headers: Self.v4Headers, time: time, expires: 599)
        let values = Dictionary(query.map { ($0.name, $0.value) }, uniquingKeysWith: { $1 })
        #expect(values["x-oss-signature-version"] == "OSS4-HMAC-SHA256")
        #expect(values["x-oss-expires"] == "599")
        #expect(values["x-oss-date"] == timestamp)
        #expect(values["x-oss-credential"] == "ak%2F20231217%2Fcn-hangzhou%2Foss%2Faliyun_v4_request")
        #expect(values["x-oss-security-token"] == token)
        #expect(query.last?.name == "x-oss-signature")
        #expect(query.last?.value == signature)
    }

    @Test func v4URLForADownload() throws {
        let signer = OSSSigner(credentials: .init(accessKeyID: "ak", accessKeySecret: "sk"), region: "cn-hangzhou", expiresIn: 86400)
        let now = Date(timeIntervalSince1970: 1_701_575_060)   // 2023-12-03T03:44:20Z
        let signed = try signer.presign(try #require(URL(string: "oss://examplebucket/exampleobject")), now: now)
        let time = SigningTime(now)
        let expected = signer.v4Query(method: "GET", bucket: "examplebucket", key: "exampleobject", parameters: [], headers: [],
                                      time: time, expires: 86400)
        #expect(signed.url.absoluteString == "https://examplebucket.oss-cn-hangzhou.aliyuncs.com/exampleobject?"
            + expected.map { "\($0.name)=\($0.value)" }.joined(separator: "&"))
        #expect(signed.url.absoluteString.contains("x-oss-credential=ak%2F20231203%2Fcn-hangzhou%2Foss%2Faliyun_v4_request"))
        #expect(signed.url.absoluteString.contains("x-oss-date=20231203T034420Z&x-oss-expires=86400"))
        // Signing the signed URL again replaces the old x-oss-* parameters.
        #expect(try signer.presign(signed.url, now: now).url == signed.url)
    }

    @Test func userParametersStayAndAreSigned() throws {
        let signer = OSSSigner(credentials: .init(accessKeyID: "ak", accessKeySecret: "sk"))
        let now = Date(timeIntervalSince1970: 1_701_575_060)
        let url = try #require(URL(string: "https://b.oss-cn-hangzhou.aliyuncs.com/p.jpg?x-oss-process=image%2Fresize%2Cw_100"))
        let signed = try signer.presign(url, now: now)
        #expect(signed.url.absoluteString.contains("x-oss-process=image%2Fresize%2Cw_100"))
        let unprocessed = try signer.presign(try #require(URL(string: "https://b.oss-cn-hangzhou.aliyuncs.com/p.jpg")), now: now)
        #expect(signed.url.absoluteString.components(separatedBy: "x-oss-signature=").last
            != unprocessed.url.absoluteString.components(separatedBy: "x-oss-signature=").last)
    }

    @Test func pathStyleOnACustomEndpoint() throws {
        let endpoint = URL(string: "http://127.0.0.1:8080")
        let signer = OSSSigner(credentials: .init(accessKeyID: "ak", accessKeySecret: "sk"), endpoint: endpoint)
        let now = Date(timeIntervalSince1970: 1_701_575_060)
        let fromScheme = try signer.presign(try #require(URL(string: "oss://bucket/dir/file.bin")), now: now)
        #expect(fromScheme.url.absoluteString.hasPrefix("http://127.0.0.1:8080/bucket/dir/file.bin?"))
        let fromURL = try signer.presign(try #require(URL(string: "http://127.0.0.1:8080/bucket/dir/file.bin")), now: now)
        #expect(fromURL.url == fromScheme.url)
    }

    @Test func credentialsNeverDescribeTheirSecrets() {
        let text = "\(OSSSigner.Credentials(accessKeyID: "LTAI", accessKeySecret: "s3cr3t", securityToken: "t0ken"))"
        #expect(text.contains("LTAI") && !text.contains("s3cr3t") && !text.contains("t0ken"))
    }
}
