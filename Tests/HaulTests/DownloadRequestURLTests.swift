import Foundation
@testable import Haul
import HaulHTTP
import Testing

/// The URL checks of ``DownloadRequest`` and the codes HTTP failures get.
@Suite struct DownloadRequestURLTests {
    @Test func checkedURLGivesTheParseEveryDownloadMakesOrNone() throws {
        let text = "http://Host.example:8080/a/./b?q=1"
        let checked = try DownloadRequest.checkedURL(text, parsed: URL(string: text))
        #expect(checked.parsed == (try HTTPURL.parse(checked.url.absoluteString)))
        #expect(checked.parsed?.target == "/a/b?q=1")
        // URL(string:) writes an international host as xn--: the download parses that text, not this one.
        let international = "http://b\u{FC}cher.example/x"
        let other = try DownloadRequest.checkedURL(international, parsed: URL(string: international))
        #expect(other.parsed == nil && other.url.host == "xn--bcher-kva.example")
        // Text that both parsers take but URL(string:) writes otherwise: no parse is kept, even
        // one that would have been the same.
        let rewritten = "http://h/\u{E4}.zip"
        let third = try DownloadRequest.checkedURL(rewritten, parsed: URL(string: rewritten))
        try #require(third.url.absoluteString != rewritten, "URL(string:) keeps \(rewritten) as it is; the case no longer applies")
        #expect(third.parsed == nil)

        var request = DownloadRequest(url: checked.url)
        request.parsedURL = checked.parsed
        request.url = try #require(URL(string: "http://other.example/"))
        #expect(request.parsedURL == nil, "a parse of the former URL must not outlive it")
    }

    @Test("every kind of HTTP failure has a download code, and network kinds are retried", arguments: HTTPClientError.Kind.allCases)
    func httpKindsMapToCodes(_ kind: HTTPClientError.Kind) {
        let error = DownloadError(HTTPClientError(kind, "words"))
        #expect(error.message == "words")
        let network: Set<HTTPClientError.Kind> = [.dnsFailure, .connectionRefused, .connectionReset, .connectTimeout,
                                                   .headerTimeout, .stalled, .truncatedBody, .networkError]
        #expect(error.isRetryable == network.contains(kind))
        #expect(error.code.exitStatus == (network.contains(kind) ? 4 : error.code.exitStatus))
        if kind != .invalidRequest && kind != .invalidTLSSettings {
            #expect(error.code.name == kind.rawValue)
        }
    }
}
