import Foundation
import Testing

/// docs/ARCHITECTURE.md's module table is the rule of which module may import which: every
/// `import` under `Sources/` keeps to its module's row, every source folder has a row, and a row
/// names only modules above it (nothing imports upward, no cycles).
@Suite struct ModuleGraphTests {
    static let repository = ReadmeTests.repository
    /// Modules of the system and the toolchain, which any module may import.
    static let system: Set<String> = ["Foundation", "FoundationEssentials", "FoundationNetworking", "Glibc", "Darwin",
                                      "Synchronization", "Dispatch", "Observation", "SwiftUI", "os"]

    /// The rows of the table under "## Modules": module and the modules it may import, in order.
    static func rows(of text: String) -> [(module: String, allowed: Set<String>)] {
        guard let start = text.range(of: "## Modules\n") else { return [] }
        let section = text[start.upperBound...].prefix { _ in true }
        let end = section.range(of: "\n## ")?.lowerBound ?? section.endIndex
        return section[..<end].split(separator: "\n").compactMap { line in
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count >= 4, cells[1].hasPrefix("`"), cells[1].hasSuffix("`") else { return nil }
            let allowed = cells[2] == "–" ? [] : cells[2].split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            return (String(cells[1].dropFirst().dropLast()), Set(allowed))
        }
    }

    /// The modules each Swift file under `folder` imports (with `@testable`, `@_exported` and
    /// `import struct M.T` forms), by file.
    static func imports(in folder: URL) -> [(file: String, module: String)] {
        let files = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil)?
            .compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" } ?? []
        let pattern = /^\s*(?:@\w+\s+)*import\s+(?:(?:struct|class|enum|protocol|func|var|let|typealias)\s+)?(\w+)/
        return files.flatMap { file in
            ((try? String(contentsOf: file, encoding: .utf8)) ?? "").split(separator: "\n").compactMap { line in
                (try? pattern.firstMatch(in: String(line))).flatMap { $0 }.map { (file.lastPathComponent, String($0.output.1)) }
            }
        }
    }

    @Test func everyImportKeepsToItsModulesRow() throws {
        let rows = Self.rows(of: try String(contentsOf: Self.repository.appendingPathComponent("docs/ARCHITECTURE.md"), encoding: .utf8))
        #expect(rows.count >= 15, "the module table was not found")
        let allowed = Dictionary(rows.map { ($0.module, $0.allowed) }, uniquingKeysWith: { first, _ in first })
        let sources = Self.repository.appendingPathComponent("Sources")
        for folder in try FileManager.default.contentsOfDirectory(atPath: sources.path).sorted() {
            let found = Self.imports(in: sources.appendingPathComponent(folder))
            guard !found.isEmpty || allowed[folder] != nil else { continue }   // a C target without imports
            guard let rule = allowed[folder] else {
                Issue.record("Sources/\(folder) has no row in docs/ARCHITECTURE.md's module table")
                continue
            }
            for (file, module) in found where !Self.system.contains(module) && !rule.contains(module) {
                Issue.record("Sources/\(folder)/\(file) imports \(module), which its row does not allow")
            }
        }
    }

    @Test func aRowNamesOnlyModulesAboveIt() throws {
        let rows = Self.rows(of: try String(contentsOf: Self.repository.appendingPathComponent("docs/ARCHITECTURE.md"), encoding: .utf8))
        var above: Set<String> = []
        for row in rows {
            for module in row.allowed where !above.contains(module) {
                Issue.record("\(row.module) may import \(module), which is not above it")
            }
            above.insert(row.module)
        }
    }

    @Test func theRuleCatchesAnImportItDoesNotAllow() {
        let table = "## Modules\n| module | may import | owns |\n|---|---|---|\n| `A` | – | a |\n| `B` | A | b |\n| `C` | B, D | c |\n"
        let rows = Self.rows(of: table)
        #expect(rows.map(\.module) == ["A", "B", "C"])
        #expect(rows[0].allowed.isEmpty && rows[1].allowed == ["A"] && rows[2].allowed == ["B", "D"])
    }
}
