import CHaulTLS
@testable import HaulDashboard
import Foundation
import HaulTestSupport
import Testing

/// The embedded files are the ones in Sources/HaulDashboard/Assets, byte for byte, within the
/// size budget, and hold nothing the page's Content-Security-Policy would block or that reaches
/// outside the daemon's origin. After changing an asset, regenerate the Swift file with
/// `python3 Scripts/embed-dashboard.py` (or `HAUL_UPDATE_DASHBOARD=1 swift test --filter
/// DashboardAssetsTests`, which runs it; build again to embed the result).
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

    @Test func theGeneratedFileHoldsTheAssetsFolder() throws {
        if ProcessInfo.processInfo.environment["HAUL_UPDATE_DASHBOARD"] == "1" {
            let script = Process()
            script.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            script.arguments = ["python3", Self.repository.appendingPathComponent("Scripts/embed-dashboard.py").path]
            try script.run()
            script.waitUntilExit()
            #expect(script.terminationStatus == 0)
            return
        }
        let stale = "Sources/HaulDashboard/DashboardAssets+Generated.swift is stale: run python3 Scripts/embed-dashboard.py"
        let files = try Self.files()
        #expect(Set(files.keys.map { "/" + $0 }) == Set(Dashboard.assets.keys), "\(stale)")
        for (name, data) in files {
            let asset = try #require(Dashboard.assets["/" + name], "\(stale)")
            #expect(Array(asset.text.utf8) == Array(data), "\(name): \(stale)")
            #expect(asset.entityTag == "\"\(Self.sha256Hex(data).prefix(32))\"", "\(name): \(stale)")
        }
    }

    @Test func everythingTogetherStaysUnder150KB() {
        let total = Dashboard.assets.values.reduce(0) { $0 + $1.text.utf8.count }
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
