@testable import HaulCLI
import Foundation
import Testing

/// The README's CLI reference is the `--help` text, word for word.
@Suite struct ReadmeTests {
    @Test func readmeCarriesTheHelpText() throws {
        let readme = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("README.md")
        let text = try String(contentsOf: readme, encoding: .utf8)
        let begin = try #require(text.range(of: "<!-- CLI-REFERENCE:BEGIN -->\n```\n"))
        let end = try #require(text.range(of: "```\n<!-- CLI-REFERENCE:END -->"))
        #expect(String(text[begin.upperBound..<end.lowerBound]) == HelpText.download)
    }
}
