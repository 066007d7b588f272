import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HaulTestSupport
import Testing
@testable import Haul
import HaulCore
import HaulHTTP
@testable import HaulURLSession

/// The `URLSession` transport's per-task state without a network: the body queue, its bounds,
/// the order of chunks and failures, timeouts, cancellation, redirects and error mapping.
@Suite("URLSession task state", .throttled, .timeLimit(.minutes(1)))
struct SessionTaskStateTests {
    static func makeState(_ url: String = "http://127.0.0.1:8080/file", headers: [(name: String, value: String)] = [])
        throws -> SessionTaskState {
        let policy = RedirectPolicy(original: try HTTPURL.parse(url), userHeaders: headers)
        return SessionTaskState(policy: policy, template: SessionRequestTemplate(userAgent: "haul/test", range: nil, ifRange: nil,
                                                                                  timeout: .seconds(60)))
    }

    static func response(_ status: Int = 200, length: Int? = nil) -> HTTPURLResponse {
        var fields = ["Content-Type": "application/octet-stream"]
        if let length { fields["Content-Length"] = "\(length)" }
        return HTTPURLResponse(url: URL(string: "http://127.0.0.1:8080/file")!, statusCode: status, httpVersion: "HTTP/1.1",
                               headerFields: fields)!
    }

    @Test func chunksComeOutInOrderThenTheEnd() throws {
        let state = try Self.makeState()
        state.received(Self.response(length: 6))
        #expect(try state.waitForHead(until: .now + .seconds(1), cancellation: CancellationSignal()).status == 200)
        #expect(state.expectedLength == 6)
        for text in ["ab", "cd", "ef"] { #expect(state.received(Data(text.utf8)) == .proceed) }
        state.completed(error: nil)
        var body = Data()
        while case .chunk(let data) = try state.next(stallTimeout: .seconds(1), cancellation: CancellationSignal()) { body += data }
        #expect(body == Data("abcdef".utf8))
    }

    @Test func bytesBeforeAFailureAreHandedOutFirst() throws {
        let state = try Self.makeState()
        state.received(Self.response())
        _ = state.received(Data("kept".utf8))
        state.completed(error: URLError(.networkConnectionLost))
        guard case .chunk(let data) = try state.next(stallTimeout: .seconds(1), cancellation: CancellationSignal()) else {
            Issue.record("expected the queued chunk")
            return
        }
        #expect(data == Data("kept".utf8))
        do throws(DownloadError) {
            _ = try state.next(stallTimeout: .seconds(1), cancellation: CancellationSignal())
            Issue.record("expected the failure")
        } catch {
            #expect(error.code == .truncatedBody)
        }
    }

    @Test func aBodyFarAheadOfTheEngineIsHeldBack() throws {
        let state = try Self.makeState()
        state.received(Self.response())
        let chunk = Data(count: 1 << 20)
        var pressures: [SessionTaskState.Pressure] = []
        for _ in 0..<(SessionTaskState.hardLimit >> 20) + 1 { pressures.append(state.received(chunk)) }
        #if os(Linux)
        // FoundationNetworking cannot pause a task: past the hard limit it is ended, retryably.
        #expect(pressures.dropLast().allSatisfy { $0 == .proceed })
        #expect(pressures.last == .cancel)
        var delivered = 0
        do throws(DownloadError) {
            while case .chunk(let data) = try state.next(stallTimeout: .seconds(1), cancellation: CancellationSignal()) {
                delivered += data.count
            }
            Issue.record("expected a failure after the queued chunks")
        } catch {
            #expect(error.code == .networkError && error.isRetryable)
        }
        #expect(delivered == pressures.count << 20, "every queued byte is delivered before the failure")
        #else
        // Elsewhere the task is suspended once above the high-water mark and resumed when drained.
        #expect(pressures.filter { $0 == .suspend }.count == 1)
        #expect(pressures.firstIndex(of: .suspend) == SessionTaskState.highWater >> 20)
        #endif
    }

    @Test func nothingArrivingIsAStallAndACancelEndsTheWaitAtOnce() throws {
        let state = try Self.makeState()
        state.received(Self.response())
        do throws(DownloadError) {
            _ = try state.next(stallTimeout: .milliseconds(200), cancellation: CancellationSignal())
            Issue.record("expected a stall")
        } catch {
            #expect(error.code == .stalled)
        }

        let signal = CancellationSignal()
        Thread.detachNewThread { Thread.sleep(forTimeInterval: 0.1); signal.cancel() }
        do throws(DownloadError) {
            _ = try state.next(stallTimeout: .seconds(30), cancellation: signal)
            Issue.record("expected cancellation")
        } catch {
            #expect(error.code == .cancelled)
        }
    }

    @Test func aHeadThatNeverComesIsAHeaderTimeout() throws {
        let state = try Self.makeState()
        do throws(DownloadError) {
            _ = try state.waitForHead(until: .now + .milliseconds(100), cancellation: CancellationSignal())
            Issue.record("expected a timeout")
        } catch {
            #expect(error.code == .headerTimeout)
        }
    }

    @Test func redirectsFollowThePolicy() throws {
        let state = try Self.makeState(headers: [(name: "Authorization", value: "Bearer secret"), (name: "X-Key", value: "k")])
        let same = try #require(state.redirect(status: 302, location: "/other"))
        #expect(same.url?.absoluteString == "http://127.0.0.1:8080/other")
        #expect(same.value(forHTTPHeaderField: "Authorization") == "Bearer secret")
        #expect(same.value(forHTTPHeaderField: "Accept-Encoding") == "identity")
        let elsewhere = try #require(state.redirect(status: 307, location: "http://127.0.0.1:9090/x"))
        #expect(elsewhere.value(forHTTPHeaderField: "Authorization") == nil)
        #expect(elsewhere.value(forHTTPHeaderField: "X-Key") == nil)
        #expect(elsewhere.value(forHTTPHeaderField: "User-Agent") == "haul/test")
        #expect(state.policy.current.port == 9090)

        #expect(state.redirect(status: 302, location: "file:///etc/passwd") == nil)
        do throws(DownloadError) {
            _ = try state.waitForHead(until: .now + .seconds(1), cancellation: CancellationSignal())
            Issue.record("expected the refusal")
        } catch {
            #expect(error.code == .redirectRefused)
        }
    }

    @Test(arguments: [
        (URLError.Code.cannotConnectToHost, false, DownloadError.Code.connectionRefused),
        (.cannotFindHost, false, .dnsFailure),
        (.timedOut, false, .connectTimeout),
        (.timedOut, true, .stalled),
        (.networkConnectionLost, false, .connectionReset),
        (.networkConnectionLost, true, .truncatedBody),
        (.serverCertificateUntrusted, false, .tlsCertificateUntrusted),
        (.secureConnectionFailed, false, .tlsHandshakeFailed),
        (.httpTooManyRedirects, false, .tooManyRedirects),
        (.badServerResponse, true, .malformedResponse),
        (.cancelled, true, .cancelled),
    ])
    func urlErrorsMapToHaulCodes(code: URLError.Code, afterHead: Bool, expected: DownloadError.Code) {
        #expect(DownloadError(urlSessionError: URLError(code), afterHead: afterHead).code == expected)
    }
}
