import HaulTestSupport
import Testing
@testable import Haul

@Suite struct FileNamerTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var contentDisposition: String?
        var path: String
        var contentType: String?
        var expected: String
        var testDescription: String { "\(contentDisposition ?? "-") | \(path) | \(contentType ?? "-")" }

        init(_ contentDisposition: String?, _ path: String, _ contentType: String?, _ expected: String) {
            self.contentDisposition = contentDisposition
            self.path = path
            self.contentType = contentType
            self.expected = expected
        }
    }

    @Test(arguments: [
        Case(nil, "/files/report.pdf", nil, "report.pdf"),
        Case(nil, "/files/report.pdf", "text/html", "report.pdf"),
        Case(nil, "/a/%E2%82%AC%20rates.txt", nil, "€ rates.txt"),
        Case(nil, "/a/..%2F..%2Fetc%2Fpasswd", nil, "passwd"),
        Case(nil, "/a/..%2f..%2fetc%2fpasswd", nil, "passwd"),
        Case(nil, "/a/..%5C..%5Cboot.ini", nil, "boot.ini"),
        Case(nil, "/a/%2e%2e", nil, "download"),
        Case(nil, "/a/%2E", "text/plain", "download.txt"),
        Case(nil, "/a/%FF%FE.bin", nil, "__.bin"),
        Case(nil, "/a/caf%C3", nil, "caf_"),
        Case(nil, "/a/100%.txt", nil, "100%.txt"),
        Case(nil, "/a/%zz.txt", nil, "%zz.txt"),
        Case(nil, "/a/50%2", nil, "50%2"),
        Case(nil, "/a/%00evil%1B.txt", nil, "evil.txt"),
        Case(nil, "/a/.hidden", nil, "_hidden"),
        Case(nil, "/a/%2Ehidden", nil, "_hidden"),
        Case(nil, "/a/x.part", nil, "x.part_"),
        Case(nil, "/a/file?name=other.txt", nil, "file"),
    ])
    func urlPath(_ testCase: Case) {
        #expect(FileNamer.name(contentDisposition: testCase.contentDisposition, originalURLPath: testCase.path,
                               contentType: testCase.contentType) == testCase.expected)
    }

    @Test(arguments: [
        Case(nil, "/files/", "text/html", "download.html"),
        Case(nil, "/files/", nil, "download"),
        Case(nil, "/", "application/json", "download.json"),
        Case(nil, "", nil, "download"),
        Case(nil, "/README", "text/plain; charset=utf-8", "README.txt"),
        Case(nil, "/archive.tar.gz", "application/gzip", "archive.tar.gz"),
        Case("attachment; filename=\"report\"", "/x", "application/pdf", "report.pdf"),
        // Never an executable extension, and nothing for unknown or generic types.
        Case(nil, "/setup", "application/x-msdownload", "setup"),
        Case(nil, "/install", "application/x-sh", "install"),
        Case(nil, "/app", "text/javascript", "app"),
        Case(nil, "/data", "application/octet-stream", "data"),
        Case(nil, "/", "application/x-msdownload", "download"),
        Case(nil, "/data", "", "data"),
        // The added extension never pushes the name over the limit.
        Case(nil, "/" + String(repeating: "a", count: 300), "text/plain", String(repeating: "a", count: 244) + ".txt"),
    ])
    func fallbackAndMIMEExtension(_ testCase: Case) {
        #expect(FileNamer.name(contentDisposition: testCase.contentDisposition, originalURLPath: testCase.path,
                               contentType: testCase.contentType) == testCase.expected)
    }

    @Test(arguments: [
        Case("attachment; filename=\"server.txt\"", "/a/url.bin", nil, "server.txt"),
        Case("attachment; filename=\"EURO rates\"; filename*=utf-8''%e2%82%ac%20rates.csv", "/a/u.bin", nil, "€ rates.csv"),
        Case("attachment; filename*=UTF-8''%2e%2e%2fsecret.txt", "/a/u.bin", nil, "secret.txt"),
        Case("attachment; filename*=UTF-8''%2e%2e%2f", "/a/u.bin", nil, "u.bin"),
        Case(#"attachment; filename="..\\..\\x""#, "/a/u.bin", nil, "x"),
        Case("attachment; filename=\"/etc/passwd\"", "/a/u.bin", nil, "passwd"),
        Case("attachment; filename=\"..\"", "/a/u.bin", nil, "u.bin"),
        Case("attachment; filename=\".bashrc\"", "/a/u.bin", nil, "_bashrc"),
        Case("attachment; filename*=UTF-8''%00%1b.txt", "/a/u.bin", nil, "_txt"),
        Case("attachment; filename=\"x.resume\"", "/a/u.bin", nil, "x.resume_"),
        Case("attachment", "/a/url.bin", nil, "url.bin"),
        Case("garbage;;=", "/a/url.bin", nil, "url.bin"),
        Case("attachment; filename=\"unterminated", "/a/url.bin", nil, "url.bin"),
        Case("attachment; filename=\"..\"", "/a/", "image/png", "download.png"),
    ])
    func contentDispositionFirst(_ testCase: Case) {
        #expect(FileNamer.name(contentDisposition: testCase.contentDisposition, originalURLPath: testCase.path,
                               contentType: testCase.contentType) == testCase.expected)
    }

    @Test(arguments: [
        ("/a/b/c.txt", "c.txt"),
        ("/a/b/", ""),
        ("", ""),
        ("/%41%42", "AB"),
        ("/a%2Fb", "a/b"),
        ("/x?y/z", "x"),
        ("/x#frag/z", "x"),
        ("plain", "plain"),
        ("/dir/%", "%"),
        ("/dir/a%4", "a%4"),
        ("/dir/file.bin?name=%41", "file.bin"),
        ("/dir/é-ü.bin", "é-ü.bin"),
    ])
    func lastPathSegment(path: String, expected: String) {
        #expect(FileNamer.lastPathSegment(of: path) == expected)
    }
}
