import Foundation
import Haul
import HaulServer
import HaulTestSupport

/// A downloader whose every request goes through `proxy` (with `credentials` as its userinfo).
func proxiedDownloader(_ proxy: ProxyServer, credentials: String? = nil,
                       _ adjust: (inout Downloader.Configuration) -> Void = { _ in }) -> Downloader {
    testDownloader { configuration in
        configuration.proxy = .url(proxyURL(proxy, credentials: credentials), noProxy: [])
        configuration.tls = .init(extraCAFile: TestCertificates.shared.caFile)
        configuration.proxy.tls = .init(extraCAFile: TestCertificates.shared.caFile)
        adjust(&configuration)
    }
}

/// The proxy's URL with `credentials` (`user:password`) as userinfo.
func proxyURL(_ proxy: ProxyServer, credentials: String? = nil) -> String {
    guard let credentials else { return proxy.url }
    return proxy.url.replacingOccurrences(of: "://", with: "://\(credentials)@")
}

/// An origin server, over TLS when `tls` is set (then named `localhost`, as the test certificate).
func origin(tls: Bool = false) throws -> HaulServer {
    try HaulServer(configuration: .init(tls: tls ? TestCertificates.shared.serverIdentity : nil))
}

/// A proxy of `kind`, requiring `user`/`password` when given, misbehaving as told.
func proxy(_ kind: ProxyServer.Kind = .http, user: String? = nil, password: String? = nil,
           behaviour: ProxyServer.Behaviour = .normal, tls: Bool = false) throws -> ProxyServer {
    try ProxyServer(configuration: .init(kind: kind, user: user, password: password, behaviour: behaviour,
                                         tls: tls ? TestCertificates.shared.serverIdentity : nil))
}

extension RecordedRequest {
    /// The header names, lowercased, in order.
    var headerNames: [String] { headers.map { $0.name.lowercased() } }
}
