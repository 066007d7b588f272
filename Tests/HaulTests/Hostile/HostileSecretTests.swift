import Foundation
import Haul
import HaulServer
import HaulTestSupport
import Testing

/// Issue 4, "Redirects and secrets": signed URL values, tokens and userinfo never appear in clear
/// in error messages, events or the resume record, through the library.
@Suite("Secrets never appear in clear", .throttled, .timeLimit(.minutes(1)))
struct HostileSecretTests {
    @Test("a download cut short after a redirect to a signed URL leaves no secret in its error, events or resume record")
    func cutShortAfterASignedRedirect() async throws {
        let api = try HaulServer()
        let storage = try HaulServer()
        let signed = "http://localhost:\(storage.port)/bytes/300000/obj.bin?\(PlantedSecret.signedQuery)&drop-after=100000"
        api.route("/dl/file.bin") { _, connection in
            try connection.write("HTTP/1.1 302 Found\r\nLocation: \(signed)\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        }
        var components = URLComponents(string: api.url("/dl/file.bin?token=token-secret"))!
        components.user = "alice"
        components.password = PlantedSecret.password
        let request = DownloadRequest(url: components.url!, headers: PlantedSecret.headers)
        try await withTemporaryDirectory { dir in
            let download = testDownloader().download(request, to: .directory(dir))
            var texts: [String] = []
            var failure: DownloadError?
            do throws(DownloadError) {
                for try await event in download.events {
                    texts.append(String(describing: event))
                    if case .started(let start) = event {
                        #expect(start.redactedURL == "http://127.0.0.1:\(api.port)/dl/file.bin?token=REDACTED")
                    }
                }
            } catch {
                failure = error
            }
            let error = try #require(failure)
            #expect(error.code == .truncatedBody)
            #expect(error.code.exitStatus == 4)
            texts += [error.message, String(describing: error), String(reflecting: error)]
            #expect(listFiles(dir) == ["file.bin.part", "file.bin.resume"])
            let record = try String(contentsOf: dir.appendingPathComponent("file.bin.resume"), encoding: .utf8)
            #expect(record.contains("X-Amz-Signature=REDACTED"), "\(record)")
            texts.append(record)
            for text in texts {
                #expect(PlantedSecret.leaked(in: text).isEmpty, "\(text)")
                #expect(!text.contains("alice"), "\(text)")
            }
            expectNoSecrets(in: storage.requests, "the storage")
        }
    }

    @Test("refused redirects name their target without its secrets", arguments: [
        ("http://alice:pw-secret-userinfo@ho st/x?X-Amz-Signature=amzsig-secret", DownloadError.Code.redirectRefused),
        ("http://alice:pw-secret-userinfo@127.0.0.1:0/x?token=token-secret", .redirectRefused),
        ("file:///etc/passwd?Signature=cfsig-secret", .redirectRefused),
        ("/self?X-Amz-Signature=amzsig-secret&token=token-secret", .tooManyRedirects),
    ])
    func refusedRedirectMessages(location: String, code: DownloadError.Code) async throws {
        let server = try HaulServer()
        server.route("/self") { _, connection in
            try connection.write("HTTP/1.1 302 Found\r\nLocation: \(location)\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        }
        await withTemporaryDirectory { dir in
            let start = url(server, location.hasPrefix("/self") ? location : "/self")
            let error = await expectFailure(testDownloader(), DownloadRequest(url: start, headers: PlantedSecret.headers), to: .directory(dir))
            #expect(error?.code == code)
            #expect(error?.code.exitStatus == 7)
            for text in [error?.message ?? "", String(describing: error)] {
                #expect(PlantedSecret.leaked(in: text).isEmpty, "\(text)")
            }
            #expect(listFiles(dir) == [])
        }
    }
}
