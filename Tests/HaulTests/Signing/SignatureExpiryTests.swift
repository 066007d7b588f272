import HaulTestSupport
import Testing
@testable import Haul

@Suite struct SignatureExpiryTests {
    // S3's answer to an expired presigned URL (the AccessDenied error of
    // https://docs.aws.amazon.com/AmazonS3/latest/API/ErrorResponses.html, as S3 sends it).
    static let s3Expired = """
        <?xml version="1.0" encoding="UTF-8"?>
        <Error><Code>AccessDenied</Code><Message>Request has expired</Message><X-Amz-Expires>60</X-Amz-Expires>\
        <Expires>2024-01-01T00:01:00Z</Expires><ServerTime>2024-01-01T00:05:00Z</ServerTime>\
        <RequestId>4442587FB7D0A2F9</RequestId><HostId>aGVsbG8=</HostId></Error>
        """
    // OSS: https://www.alibabacloud.com/help/en/oss/support/0002-00000069 (URL signature expired).
    static let ossExpired = """
        <?xml version="1.0" encoding="UTF-8"?>
        <Error>
          <Code>AccessDenied</Code>
          <Message>Request has expired.</Message>
          <RequestId>5C3D9175B6FC201293AD****</RequestId>
          <HostId>oss-example.oss-cn-hangzhou.aliyuncs.com</HostId>
          <Expires>2023-12-20T08:48:18.000Z</Expires>
          <ServerTime>2023-12-20T08:50:02.000Z</ServerTime>
          <EC>0002-00000069</EC>
        </Error>
        """
    // OSS, S3-compatible V4 URL expired: https://www.alibabacloud.com/help/en/oss/support/0002-00000418
    // (the page gives the code, not the body; this body has only the code to show that it suffices).
    static let ossS3CompatibleExpired = """
        <Error><Code>AccessDenied</Code><Message>...</Message><EC>0002-00000418</EC></Error>
        """
    static let s3BadSignature = """
        <Error><Code>SignatureDoesNotMatch</Code><Message>The request signature we calculated does not match \
        the signature you provided. Check your key and signing method.</Message></Error>
        """
    static let s3Denied = "<Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>"

    @Test(arguments: [s3Expired, ossExpired, ossS3CompatibleExpired])
    func expiredSignatures(body: String) {
        #expect(isExpiredSignature(status: 403, body: body))
        #expect(isExpiredSignature(status: 403, body: Array(body.utf8)))
    }

    @Test(arguments: [s3BadSignature, s3Denied, "", "Request has expired", "<Code>AccessDenied</Code>"])
    func otherRefusals(body: String) {
        #expect(!isExpiredSignature(status: 403, body: body))
    }

    @Test(arguments: [400, 401, 404, 500])
    func onlyA403Counts(status: Int) {
        #expect(!isExpiredSignature(status: status, body: Self.s3Expired))
    }
}
