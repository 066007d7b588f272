import CHaulTLS
@testable import HaulDashboard
import Foundation
import HaulTestSupport
import Testing

/// The embedded files are the ones in Sources/HaulDashboard/Assets, byte for byte, within the
/// size budget, and hold nothing the page's Content-Security-Policy would block or that reaches
/// outside the daemon's origin. SwiftPM embeds the folder at build time; a file added there
/// needs its line in `Dashboard.assets` (Dashboard+Assets.swift).
@Suite(.throttled) struct DashboardAssetsTests {
    static let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let folder = repository.appendingPathComponent("Sources/HaulDashboard/Assets")

    static func files() throws -> [String: Data] {
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { !$0.hasPrefix(".") }
        return try Dictionary(uniqueKeysWithValues: names.map { name in
            (name, try Data(contentsOf: folder.appendingPathComponent(name)))
        })
    }

    static func sha256Hex(_ data: Data) -> String {
        var digest = [UInt8](repeating: 0, count: 32)
        _ = data.withUnsafeBytes { haul_digest_once(Int32(HAUL_DIGEST_SHA256), $0.baseAddress, $0.count, &digest) }
        return digest.map { String(format: "%02x", $0) }.joined()
    }

    @Test func theEmbeddedFilesAreTheAssetsFolder() throws {
        let files = try Self.files()
        #expect(Set(files.keys.map { "/" + $0 }) == Set(Dashboard.assets.keys), "a file without its line in Dashboard.assets")
        for (name, data) in files {
            let asset = try #require(Dashboard.assets["/" + name])
            #expect(asset.body == Array(data), "\(name)")
            #expect(asset.entityTag == "\"\(Self.sha256Hex(data).prefix(32))\"", "\(name)")
        }
    }

    @Test func everythingTogetherStaysUnder150KB() {
        let total = Dashboard.assets.values.reduce(0) { $0 + $1.body.count }
        #expect(total < 150_000, "\(total) bytes")
    }

    @Test func thePageLoadsItsScriptsAndStylesFromFilesOnly() throws {
        let page = try #require(Dashboard.assets["/index.html"]).text
        // Every <script> names a file and holds nothing itself; no <style> element.
        for opening in page.ranges(of: "<script") {
            let rest = page[opening.upperBound...]
            let tagEnd = try #require(rest.firstIndex(of: ">"))
            #expect(rest[..<tagEnd].contains("src="))
            #expect(rest[rest.index(after: tagEnd)...].hasPrefix("</script>"))
        }
        #expect(!page.contains("<style"))
        for (path, asset) in Dashboard.assets where path.hasSuffix(".html") || path.hasSuffix(".svg") {
            #expect(asset.text.firstMatch(of: /\sstyle\s*=/) == nil, "\(path): a style attribute")
            #expect(asset.text.firstMatch(of: /(?i)\son[a-z]+\s*=/) == nil, "\(path): an event handler attribute")
            #expect(!asset.text.contains("javascript:"), "\(path)")
        }
    }

    @Test func theScriptsNeverTurnDataIntoMarkup() {
        let forbidden = ["innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(",
                         "new Function", "setAttribute('on", "setAttribute('style", "javascript:"]
        for (path, asset) in Dashboard.assets where path.hasSuffix(".js") {
            for word in forbidden {
                #expect(!asset.text.contains(word), "\(path) contains \(word)")
            }
        }
    }

    @Test func nothingPointsOutsideTheDaemonsOrigin() {
        // The SVG namespace is a name, never fetched.
        let namespaces: Set<Substring> = ["http://www.w3.org/2000/svg"]
        for (path, asset) in Dashboard.assets {
            for match in asset.text.matches(of: /(?i)(https?|wss?):\/\/[^\s'"`)<>]*/) {
                #expect(namespaces.contains(match.output.0), "\(path): \(match.output.0)")
            }
            #expect(!asset.text.contains("//cdn") && !asset.text.contains("@import"), "\(path)")
        }
    }

    @Test func everyReferenceNamesAnEmbeddedFile() throws {
        var references: [(String, Substring)] = []
        for (path, asset) in Dashboard.assets {
            for match in asset.text.matches(of: /(?:src|href)="([^"]+)"/) { references.append((path, match.output.1)) }
            for match in asset.text.matches(of: /from '([^']+)'/) { references.append((path, match.output.1)) }
        }
        #expect(references.count > 10)
        for (path, reference) in references {
            let target = reference.hasPrefix("./") ? "/" + reference.dropFirst(2) : "/" + reference
            #expect(Dashboard.assets[String(target)] != nil, "\(path) refers to \(reference)")
        }
    }
}

private extension Dashboard.Asset {
    /// The file as text (every dashboard file is UTF-8).
    var text: String { String(decoding: body, as: UTF8.self) }
}
