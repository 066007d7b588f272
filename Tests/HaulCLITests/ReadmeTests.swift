@testable import HaulCLI
import Foundation
import HaulTestSupport
import Testing

/// The documentation's generated blocks (docs/CLI.md: the `--help` texts, word for word) match
/// the code, and the README's exit status table lists every status. After changing the option
/// table, regenerate the blocks with `HAUL_UPDATE_README=1 swift test --filter ReadmeTests`.
@Suite("README and CLI reference") struct ReadmeTests {
    static let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let readmeURL = repository.appendingPathComponent("README.md")
    static let referenceURL = repository.appendingPathComponent("docs/CLI.md")

    @Test func theReferenceCarriesTheGeneratedBlocks() throws {
        var text = try String(contentsOf: Self.referenceURL, encoding: .utf8)
        if ProcessInfo.processInfo.environment["HAUL_UPDATE_README"] == "1" {
            let updated = ReadmeReference.updating(text)
            if updated != text { try updated.write(to: Self.referenceURL, atomically: true, encoding: .utf8) }
            text = updated
        }
        for (name, generated) in ReadmeReference.blocks {
            let block = try #require(ReadmeReference.block(name, in: text), "docs/CLI.md has no \(name) markers")
            #expect(block == generated, "docs/CLI.md's \(name) is stale: HAUL_UPDATE_README=1 swift test --filter ReadmeTests")
        }
    }

    @Test func theReadmeStaysShortAndPointsNowhereOutsideTheRepository() throws {
        for url in [Self.readmeURL, Self.repository.appendingPathComponent("docs/ARCHITECTURE.md")] {
            let text = try String(contentsOf: url, encoding: .utf8)
            #expect(text.split(separator: "\n", omittingEmptySubsequences: false).count <= 300, "\(url.lastPathComponent)")
            #expect(!text.contains("../shared"), "\(url.lastPathComponent) points outside the repository")
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
        let cells = rows.dropFirst(2).map { $0.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) } }
        let codes = cells.compactMap { Int32($0.first ?? "") }
        #expect(codes == Array(0...11) + [130])
        // The manual's EXIT STATUS is written from ExitStatus.meanings: the README says the same.
        #expect(codes == ExitStatus.meanings.map(\.status))
        #expect(cells.map { $0.dropFirst().first ?? "" } == ExitStatus.meanings.map(\.meaning))
    }
}
