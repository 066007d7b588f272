import Foundation
import HaulTestSupport
import Testing

/// Plain `swift test` runs suites in parallel; on a 2-core machine the suites that pace and time
/// real transfers then starve each other (see ``ExclusiveSuite``). This keeps every suite of the
/// package under `.exclusive` and `.serialized`, so a new one cannot bring that back.
@Suite(.exclusive, .serialized)
struct SuiteTraitsTests {
    static let testsFolder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()

    /// Each test source file, relative to Tests/, with its lines.
    static func sources() throws -> [(name: String, lines: [Substring])] {
        let enumerator = try #require(FileManager.default.enumerator(at: testsFolder, includingPropertiesForKeys: nil))
        var result: [(String, [Substring])] = []
        for case let url as URL in enumerator where url.pathExtension == "swift" {
            let text = try String(contentsOf: url, encoding: .utf8)
            result.append((String(url.path.dropFirst(testsFolder.path.count + 1)), text.split(separator: "\n", omittingEmptySubsequences: false)))
        }
        return result
    }

    @Test func everyTopLevelSuiteRunsAloneAndItsTestsOneAtATime() throws {
        let sources = try Self.sources()
        #expect(sources.count > 100, "the test sources were found")
        var suites = 0
        for (name, lines) in sources {
            for (index, line) in lines.enumerated() where line.hasPrefix("@Suite") {
                suites += 1
                #expect(line.contains(".exclusive") && line.contains(".serialized"), "\(name):\(index + 1): \(line)")
            }
            // A top-level test function belongs to no suite, so no trait of a suite reaches it.
            for (index, line) in lines.enumerated() where line.hasPrefix("@Test") {
                Issue.record("\(name):\(index + 1): a test outside any suite")
            }
        }
        #expect(suites > 100)
    }

    /// A top-level type with tests but without `@Suite` is a suite without the traits.
    @Test func everyTopLevelTypeWithTestsIsMarked() throws {
        for (name, lines) in try Self.sources() {
            var attributes: [Substring] = []
            var current: (declaration: Substring, marked: Bool, line: Int)?
            for (index, line) in lines.enumerated() {
                if line.hasPrefix("@") { attributes.append(line); continue }
                let declaration = ["struct ", "final class ", "class ", "enum ", "actor "].contains { line.hasPrefix($0) }
                if declaration {
                    current = (line, attributes.contains { $0.hasPrefix("@Suite") }, index + 1)
                } else if line.hasPrefix("extension ") || line.hasPrefix("func ") || line.hasPrefix("private ") {
                    current = nil
                }
                if !line.hasPrefix("@") && !line.hasPrefix("///") { attributes.removeAll() }
                // Any depth: a test of a type nested in an unmarked one is in no marked suite either.
                if let open = current, !open.marked, line.drop(while: { $0 == " " }).hasPrefix("@Test") {
                    Issue.record("\(name):\(open.line): \(open.declaration) has tests but no @Suite(.exclusive, .serialized)")
                    current = nil
                }
            }
        }
    }
}
