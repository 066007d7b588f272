import Foundation
import HaulServer
import HaulTestSupport
import Testing

/// `text` percent-encoded for a query value (everything but ASCII letters and digits).
func encodedQueryValue(_ text: String) -> String {
    text.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
}

/// Secrets planted in the hostile tests; none may reach another origin or any output.
enum PlantedSecret {
    /// Request headers the user adds (`-H`), each value holding a distinct secret.
    static let headers: [(name: String, value: String)] = [
        ("Authorization", "Bearer hdr-secret-auth"), ("Cookie", "sid=hdr-secret-cookie"),
        ("Proxy-Authorization", "Basic hdr-secret-proxy"), ("X-Api-Key", "hdr-secret-apikey"),
    ]
    /// The password put in URLs.
    static let password = "pw-secret-userinfo"
    /// Values of signed-URL query parameters.
    static let queryValues = ["amzsig-secret", "token-secret", "cfsig-secret"]

    /// Every secret string, to search outputs for.
    static var all: [String] {
        headers.map { String($0.value.split(separator: " ").last!) } + [password] + queryValues
    }

    /// A signed-URL query carrying ``queryValues``.
    static let signedQuery = "X-Amz-Signature=amzsig-secret&token=token-secret&Signature=cfsig-secret"

    /// The secrets found in `text`.
    static func leaked(in text: String) -> [String] {
        all.filter { text.contains($0) }
    }
}

/// Records an issue for every request that carries any planted secret (header or userinfo).
func expectNoSecrets(in requests: [RecordedRequest], _ what: String, sourceLocation: SourceLocation = #_sourceLocation) {
    for request in requests {
        for (name, _) in PlantedSecret.headers {
            #expect(request.header(name) == nil, "\(name) reached \(what): \(request.target)", sourceLocation: sourceLocation)
        }
        let basic = "Basic " + Data("alice:\(PlantedSecret.password)".utf8).base64EncodedString()
        let values = request.headers.map(\.value)
        #expect(!values.contains(basic), "userinfo reached \(what)", sourceLocation: sourceLocation)
        #expect(values.allSatisfy { PlantedSecret.leaked(in: $0).isEmpty }, "a secret reached \(what)", sourceLocation: sourceLocation)
    }
}
