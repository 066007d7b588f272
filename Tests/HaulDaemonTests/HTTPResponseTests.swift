import HaulDaemon
import Testing

/// The daemon's responses on the wire, without a socket.
@Suite struct HTTPResponseTests {
    @Test(arguments: ["a\r\nInjected: yes", "a\nInjected: yes", "a\rInjected: yes"])
    func aFieldValueWithALineBreakIsNotSent(_ value: String) {
        let wire = String(decoding: HTTPResponse.text(400, "no", fields: [.init("X-Echo", value), .init("X-Kept", "b")])
            .serialized(keepAlive: false), as: UTF8.self)
        #expect(!wire.contains("Injected"))
        #expect(!wire.contains("X-Echo"))
        #expect(wire.contains("X-Kept: b\r\n"))
    }
}
