import HaulCLI
import HaulServer

extension DemoOrigin {
    /// `haul demo`'s server: the loopback test server, capping each connection at
    /// `bytesPerSecond`, and the generated content it serves.
    @Sendable static func testServer(bytesPerSecond: Int) throws -> DemoOrigin {
        let server = try HaulServer(configuration: .init(rateLimit: bytesPerSecond))
        let content = HaulServer.content()
        return DemoOrigin(baseURL: server.baseURL, url: { server.url($0) }, fill: { content.fill($0, from: $1) },
                          stop: { server.stop() })
    }
}
