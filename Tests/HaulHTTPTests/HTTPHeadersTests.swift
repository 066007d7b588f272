import HaulTestSupport
import Testing
@testable import HaulHTTP
import HaulCore

/// Header names match without regard to ASCII case, and only ASCII case.
@Suite
struct HTTPHeadersTests {
    @Test func namesMatchWhateverTheirASCIICase() {
        let headers = HTTPHeaders([("Content-Length", "5"), ("content-type", "text/plain"), ("X-Ä", "1"),
                                   ("Set-Cookie", "a"), ("SET-COOKIE", "b")])
        #expect(headers["content-length"] == "5")
        #expect(headers["CONTENT-TYPE"] == "text/plain")
        #expect(headers.values(for: "set-cookie") == ["a", "b"])
        #expect(headers["Content-Lengt"] == nil)
        #expect(headers["Content-Lengthh"] == nil)
        #expect(headers["x-ä"] == nil, "only ASCII letters fold")
        #expect(headers["X-Ä"] == "1")
    }

    @Test func lookupsFindTheFirstEveryOrNoField() {
        let headers = HTTPHeaders([("ETag", ""), ("Warning", "1"), ("etag", "\"b\""), ("X", "y"), ("ETAG", "c")])
        #expect(headers["ETag"] == "", "an empty value is a value")
        #expect(headers.values(for: "Etag") == ["", "\"b\"", "c"])
        #expect(headers.values(for: "Age").isEmpty)
        #expect(headers["Age"] == nil)
        #expect(HTTPHeaders().values(for: "ETag").isEmpty)
        #expect(headers.firstIndex(of: "etag", from: 0) == 0)
        #expect(headers.firstIndex(of: "etag", from: 1) == 2)
        #expect(headers.firstIndex(of: "etag", from: 5) == nil, "a start at the end finds nothing")
        #expect(headers.firstIndex(of: "etag", from: 9) == nil, "nor one beyond it")
    }

    /// (Linux strings are all native: the comparison of stored bytes runs, not the fallback for
    /// foreign strings that Darwin may bridge.)
    @Test func longNamesCompareTheSame() {
        let long = "X-A-Rather-Long-Header-Name-Beyond-Fifteen-Bytes"
        #expect(long.asciiCaseInsensitiveEquals(long.uppercased()))
        #expect(!long.asciiCaseInsensitiveEquals(String(long.uppercased().map { $0 == "B" ? "C" : $0 })))
        #expect(String(Substring(long + "!").dropLast()).asciiCaseInsensitiveEquals(long.lowercased()))
        #expect(!"@".asciiCaseInsensitiveEquals("`"), "0x40 and 0x60 are not a case pair")
        #expect(!"[".asciiCaseInsensitiveEquals("{"))
    }

    @Test func aListFieldHoldsATokenInAnyOfItsFieldsAndElements() {
        let headers = HTTPHeaders([("Connection", "keep-alive"), ("connection", " Upgrade ,\tCLOSE\t"), ("Via", "close")])
        #expect(headers.list("Connection", contains: "close"))
        #expect(headers.list("CONNECTION", contains: "upgrade"))
        #expect(headers.list("Connection", contains: "keep-alive"))
        #expect(!headers.list("Connection", contains: "clos"))
        #expect(!headers.list("Connection", contains: "keep"))
        #expect(!HTTPHeaders([("Via", "close")]).list("Connection", contains: "close"), "other fields do not count")
        #expect(!HTTPHeaders([("Connection", ",, ,")]).list("Connection", contains: "close"))
        #expect(HTTPHeaders([("Connection", ",,close,")]).list("Connection", contains: "close"))
        #expect(!HTTPHeaders([("Connection", "closed, x-close")]).list("Connection", contains: "close"))
    }

    @Test func aConnectionIsKeptUnlessSomeConnectionFieldSaysClose() {
        func head(_ minor: Int, _ fields: [(name: String, value: String)]) -> ResponseHead {
            ResponseHead(minorVersion: minor, status: 200, reason: "OK", headers: HTTPHeaders(fields))
        }
        #expect(head(1, []).allowsReuse)
        #expect(head(1, [("Connection", "keep-alive")]).allowsReuse)
        #expect(!head(1, [("Connection", "keep-alive"), ("Connection", "close")]).allowsReuse, "the second field counts too")
        #expect(!head(1, [("Connection", "Keep-Alive, Close")]).allowsReuse)
        #expect(!head(0, [("Connection", "keep-alive")]).allowsReuse, "HTTP/1.0 keep-alive is not used")
    }
}
