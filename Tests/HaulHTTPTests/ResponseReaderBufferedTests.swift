import Foundation
import HaulServer
import HaulTestSupport
import Testing
@testable import HaulHTTP
import HaulCore

/// ``ResponseReader/bodyIsBuffered``, which lets a body that came whole with its head skip the
/// segmented transfer: true only when every remaining body byte is in the receive buffer.
@Suite(.throttled) struct ResponseReaderBufferedTests {
    /// Reads the head of `path`'s response, then asks the reader.
    private func bufferedAfterHead(_ server: HaulServer, _ path: String,
                                   _ body: (ResponseReader) throws -> Void = { _ in }) throws -> Bool {
        let url = try HTTPURL.parse("http://127.0.0.1:\(server.port)\(path)")
        let connection = try Connection(to: url, tls: try TLSContext(options: TLSSettings()), connectTimeout: .seconds(5),
                                        cancellation: CancellationSignal(), threads: ThreadPool())
        defer { connection.close() }
        try connection.write(Array("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8), timeout: .seconds(5))
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 64)
        defer { buffer.deallocate() }
        let reader = ResponseReader(connection: connection, method: .get, budget: HeaderBudget(), buffer: buffer)
        _ = try reader.readHead(deadline: .now + .seconds(5))
        let buffered = reader.bodyIsBuffered
        try body(reader)
        return buffered
    }

    @Test func aBodySentWithItsHeadIsBuffered() throws {
        let server = try HaulServer()
        server.route("/whole") { _, connection in
            try connection.write("HTTP/1.1 200 OK\r\nContent-Length: 2048\r\n\r\n" + String(repeating: "x", count: 2048))
            connection.waitUntilClosed()
        }
        #expect(try bufferedAfterHead(server, "/whole"))
    }

    @Test func aBodyStillOnItsWayIsNot() throws {
        let server = try HaulServer()
        let headRead = DispatchSemaphore(value: 0)
        server.route("/half") { _, connection in
            try connection.write("HTTP/1.1 200 OK\r\nContent-Length: 2048\r\n\r\n" + String(repeating: "x", count: 1024))
            _ = headRead.wait(timeout: .now() + 10)   // the rest comes only once the head was read and the reader asked
            try? connection.write(String(repeating: "y", count: 1024))
            connection.waitUntilClosed()
        }
        let buffered = try bufferedAfterHead(server, "/half") { reader in
            headRead.signal()
            var received = 0
            let ended = try reader.readBody(stallTimeout: .seconds(5)) { slice in
                received += slice.count
                return true
            }
            #expect(ended)
            #expect(received == 2048)
            #expect(!reader.bodyIsBuffered, "a body read to its end has nothing left to be buffered")
        }
        #expect(!buffered)
    }

    @Test("chunked and until-close bodies have no known end to be buffered", arguments: [
        "Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
        "Connection: close\r\n\r\nhello",
    ])
    func bodiesWithoutALengthAreNot(_ rest: String) throws {
        let server = try HaulServer()
        server.route("/other") { _, connection in
            try connection.write("HTTP/1.1 200 OK\r\n" + rest)
            connection.waitUntilClosed()
        }
        #expect(try !bufferedAfterHead(server, "/other"))
    }
}
