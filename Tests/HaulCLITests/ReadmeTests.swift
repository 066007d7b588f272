@testable import HaulCLI
import Foundation
import HaulTestSupport
import Testing

/// The README's generated blocks (the CLI reference is the `--help` text, word for word) match
/// the code. After changing the option table, regenerate them with
/// `HAUL_UPDATE_README=1 swift test --filter ReadmeTests`.
@Suite struct ReadmeTests {
    static let readmeURL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("README.md")

    @Test func readmeCarriesTheGeneratedBlocks() throws {
        var text = try String(contentsOf: Self.readmeURL, encoding: .utf8)
        if ProcessInfo.processInfo.environment["HAUL_UPDATE_README"] == "1" {
            let updated = ReadmeReference.updating(text)
            if updated != text { try updated.write(to: Self.readmeURL, atomically: true, encoding: .utf8) }
            text = updated
        }
        for (name, generated) in ReadmeReference.blocks {
            let block = try #require(ReadmeReference.block(name, in: text), "README.md has no \(name) markers")
            #expect(block == generated, "README.md's \(name) is stale: HAUL_UPDATE_README=1 swift test --filter ReadmeTests")
        }
    }

    @Test func updatingReplacesOnlyWhatIsBetweenTheMarkers() {
        let stale = "intro\n<!-- CLI-REFERENCE:BEGIN -->\nold\n<!-- CLI-REFERENCE:END -->\noutro\n"
        let updated = ReadmeReference.updating(stale)
        #expect(updated == "intro\n<!-- CLI-REFERENCE:BEGIN -->\n```\n\(HelpText.download)```\n<!-- CLI-REFERENCE:END -->\noutro\n")
        #expect(ReadmeReference.updating(updated) == updated)
        #expect(ReadmeReference.updating("no markers\n") == "no markers\n")
        #expect(ReadmeReference.block("CLI-REFERENCE", in: "<!-- CLI-REFERENCE:END -->\n<!-- CLI-REFERENCE:BEGIN -->\n") == nil)
    }

    @Test func theExitStatusTableListsEveryStatusOfTheContract() throws {
        let text = try String(contentsOf: Self.readmeURL, encoding: .utf8)
        let section = try #require(text.range(of: "### Exit status\n"))
        let rows = text[section.upperBound...].split(separator: "\n").drop { !$0.hasPrefix("|") }.prefix { $0.hasPrefix("|") }
        let codes = rows.dropFirst(2).compactMap { Int32($0.split(separator: "|").first?.trimmingCharacters(in: .whitespaces) ?? "") }
        #expect(codes == Array(0...11) + [130])
    }
}
