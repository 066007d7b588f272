import Foundation
import Haul
import HaulSigning
import HaulTestSupport
import Testing
@testable import HaulCLI

/// `s3://` and `oss://` signers from the environment, and the `warning` JSON event.
@Suite struct StorageURLTests {
    @Test func httpURLsNeedNoSigner() throws {
        #expect(try StorageURL.signer(for: URL(string: "https://h/f")!, endpoint: nil, environment: [:]) == nil)
    }

    @Test func s3CredentialsAndRegionComeFromTheEnvironment() throws {
        let signer = try StorageURL.signer(for: URL(string: "s3://bucket/key")!, endpoint: URL(string: "http://127.0.0.1:9000")!,
                                           environment: ["AWS_ACCESS_KEY_ID": "AK", "AWS_SECRET_ACCESS_KEY": "SK",
                                                         "AWS_SESSION_TOKEN": "ST", "AWS_DEFAULT_REGION": "ap-south-1"])
        let s3 = try #require(signer as? S3Presigner)
        #expect(s3.credentials.accessKeyID == "AK" && s3.credentials.sessionToken == "ST")
        #expect(s3.region == "ap-south-1")
        #expect(s3.endpoint?.absoluteString == "http://127.0.0.1:9000")
    }

    @Test(arguments: ["s3://bucket/key", "oss://bucket/key"])
    func missingCredentialsAreAUsageErrorNamingTheVariables(url: String) {
        do {
            _ = try StorageURL.signer(for: URL(string: url)!, endpoint: nil, environment: ["AWS_ACCESS_KEY_ID": "AK"])
            Issue.record("expected an error")
        } catch {
            #expect(error.code == .invalidArgument)
            #expect(error.message.contains(url.hasPrefix("s3") ? "AWS_SECRET_ACCESS_KEY" : "OSS_ACCESS_KEY_SECRET"))
        }
    }

    @Test func ossCredentialsMakeAnOSSSigner() throws {
        let signer = try StorageURL.signer(for: URL(string: "oss://bucket/key")!, endpoint: nil,
                                           environment: ["OSS_ACCESS_KEY_ID": "AK", "OSS_ACCESS_KEY_SECRET": "SK"])
        #expect((signer as? OSSSigner)?.credentials.accessKeyID == "AK")
    }

    @Test func warningIsOneJSONLine() {
        #expect(JSONEvent.warning(id: "2", message: "clock \"skew\"").line == "{\"event\":\"warning\",\"id\":\"2\",\"message\":\"clock \\\"skew\\\"\"}\n")
    }
}
