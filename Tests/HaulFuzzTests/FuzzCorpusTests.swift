import Foundation
import HaulFuzzTargets
import Testing

/// Every fuzz target over its seed corpus and over the inputs of every crash a fuzzer found (each
/// fixed), so `swift test` holds what fuzzing found without a fuzzer.
@Suite("Fuzz corpora replayed")
struct FuzzCorpusTests {
    static let fuzzFolder = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fuzz")

    /// The files of `Fuzz/<kind>/<target>`, sorted.
    static func inputs(_ kind: String, _ target: String) -> [URL] {
        let folder = fuzzFolder.appendingPathComponent(kind).appendingPathComponent(target)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        return names.sorted().map { folder.appendingPathComponent($0) }
    }

    @Test("every target has a seed corpus", arguments: FuzzTargets.all.map(\.name))
    func everyTargetHasSeeds(_ name: String) {
        #expect(Self.inputs("Corpus", name).count >= 3, "Fuzz/Corpus/\(name) needs seeds")
    }

    @Test("every seed and every past crash runs through its target", arguments: FuzzTargets.all.map(\.name))
    func inputsRun(_ name: String) throws {
        let target = try #require(FuzzTargets.named(name))
        let files = Self.inputs("Corpus", name) + Self.inputs("Regressions", name)
        for file in files {
            let data = try Data(contentsOf: file)
            data.withUnsafeBytes { target.run($0) }
        }
        #expect(!files.isEmpty)
    }

    @Test("the corpus folders name only known targets")
    func noStrayFolders() throws {
        for kind in ["Corpus", "Regressions"] {
            let folder = Self.fuzzFolder.appendingPathComponent(kind)
            let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
            for name in names where !name.hasPrefix(".") {
                #expect(FuzzTargets.named(name) != nil, "Fuzz/\(kind)/\(name) has no target")
            }
        }
    }
}
