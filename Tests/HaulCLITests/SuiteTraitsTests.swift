import Foundation
import HaulTestSupport
import Testing

/// House style: tests run side by side unless they must not. Plain `swift test` runs suites and
/// tests in parallel; a suite that paces real transfers, times them, measures CPU time, kills
/// processes or mounts file systems is `.exclusive` (no other such suite runs meanwhile, see
/// ``ExclusiveSuite``) and `.serialized`, and says why on a doc comment line that starts
/// `/// Exclusive:`. Any other suite that starts servers or processes is `.throttled` (a few of
/// its tests at once, at low priority, see ``ThrottledSuite``), as may be one with heavy file or
/// thread work. A suite that is only `.serialized` says why on a `/// Serialized:` line. A
/// suite that touches no server, process, thread or file is neither `.exclusive` nor
/// `.throttled`.
///
/// The rules are read from the sources: a suite is its `@Suite` line down to the next suite of
/// its file (plus what its file declares before the first suite), comment lines left out.
@Suite struct SuiteTraitsTests {
    static let testsFolder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    /// This file, relative to Tests/.
    static let ownFile = String(URL(fileURLWithPath: #filePath).path.dropFirst(testsFolder.path.count + 1))

    /// Code that paces a real transfer or takes real time, measures CPU time, kills processes
    /// or mounts file systems; with what it means, for the failure message.
    static let pacingMarkers: [(pattern: String, meaning: String)] = [
        (#"FinelyPacedFile"#, "a route paced in 4 KiB writes"),
        (#"\brateLimit(: | = )[1-9]"#, "a rate limit (server or downloader)"),
        (#"\brate: (?!0\b|nil\b|Int)[0-9A-Za-z(]"#, "a paced resource"),
        (#"\.rate = [1-9]"#, "a paced resource"),
        (#"rate=[1-9]"#, "a paced /bytes route"),
        (#"limit-rate"#, "haul --limit-rate"),
        (#"/slow"#, "a slow route"),
        (#"/trickle|\.trickle\("#, "a trickling route"),
        (#"connection\.sleep\("#, "a route that pauses between writes"),
        (#"\.now - |\.duration\(to: "#, "an elapsed time"),
        (#"getrusage|cpuTime\(|_CPUTIME_ID"#, "CPU time"),
        (#"KillableProcess"#, "processes killed at random moments"),
        (#"ScratchMount"#, "a scratch file system mount"),
        (#"DiskFillingFile"#, "a disk filled up"),
    ]

    /// Code that starts servers or processes: a suite with it is `.exclusive` or `.throttled`.
    static let heavyMarkers = [#"HaulServer\("#, #"\bhaul\("#, #"HaulProcess\("#, #"HaulBinary\."#, #"KillableProcess\("#,
                               #"\bProcess\(\)"#, #"runChildProcess\("#, #"\bcurl\("#,
                               #"\bwithDaemon\("#, #"\bDaemon\("#, #"PostgresCluster\."#]

    /// Those and threads: what makes the pacing markers real (a transfer, a process, real time).
    static let realTimeMarkers = heavyMarkers + [#"ThreadPool\("#, #"\bThread\b"#]

    /// Those and files: code that reaches past the test's own memory.
    static let ioMarkers = realTimeMarkers + [#"DispatchQueue"#, #"withTemporaryDirectory"#, #"FileManager"#,
                                              #"Downloader\(|[a-z]+Downloader\("#]

    /// `pattern` compiled, `\b` as in other regex engines (between a word character and
    /// another), not at Unicode word boundaries (where `Thread.sleep` is one word).
    static func regex(_ pattern: String) -> Regex<AnyRegexOutput> {
        try! Regex(pattern).wordBoundaryKind(.simple)
    }

    /// A top-level `@Suite` as the rules see it.
    struct SuiteSource {
        var file: String
        var line: Int
        /// The `@Suite(...)` attribute.
        var attribute: String
        /// The doc comment and attributes right above the `@Suite` line.
        var header: [String]
        /// The suite's code and its file's code before the first suite, without comment lines.
        var code: [String]

        var isExclusive: Bool { attribute.contains(".exclusive") }
        var isSerialized: Bool { attribute.contains(".serialized") }
        var isThrottled: Bool { attribute.contains(".throttled") }
        var location: String { "\(file):\(line)" }

        /// The pacing markers found, each with the first line that has it.
        var pacing: [String] {
            SuiteTraitsTests.pacingMarkers.compactMap { marker in
                let regex = SuiteTraitsTests.regex(marker.pattern)
                return code.first { $0.contains(regex) }.map { "\(marker.meaning): \($0.trimmingCharacters(in: .whitespaces))" }
            }
        }

        func uses(_ patterns: [String]) -> Bool {
            let regexes = patterns.map(SuiteTraitsTests.regex)
            return code.contains { line in regexes.contains { line.contains($0) } }
        }

        /// The text of the header's `/// Exclusive:` or `/// Serialized:` line, if any.
        func reason(_ label: String) -> String? {
            header.lazy.compactMap { line -> String? in
                guard line.hasPrefix("/// \(label): ") else { return nil }
                return String(line.dropFirst("/// \(label): ".count)).trimmingCharacters(in: .whitespaces)
            }.first
        }

        /// What breaks the house rules, one message each.
        var violations: [String] {
            var found: [String] = []
            let real = uses(SuiteTraitsTests.realTimeMarkers)
            if real, !pacing.isEmpty, !(isExclusive && isSerialized) {
                found.append("\(location): paces or times real work but is not .exclusive and .serialized: \(pacing.joined(separator: "; "))")
            }
            if isExclusive && !isSerialized {
                found.append("\(location): .exclusive without .serialized")
            }
            if isExclusive, (reason("Exclusive")?.split(separator: " ").count ?? 0) < 3 {
                found.append("\(location): .exclusive without a `/// Exclusive: why` line in its doc comment")
            }
            if isSerialized, !isExclusive, (reason("Serialized")?.split(separator: " ").count ?? 0) < 3 {
                found.append("\(location): .serialized without a `/// Serialized: why` line in its doc comment")
            }
            if isExclusive, !uses(SuiteTraitsTests.ioMarkers) {
                found.append("\(location): a pure suite (no server, process, thread or file) is .exclusive")
            }
            if !isExclusive, !isThrottled, uses(SuiteTraitsTests.heavyMarkers) {
                found.append("\(location): starts servers or processes but is neither .exclusive nor .throttled")
            }
            if isExclusive && isThrottled {
                found.append("\(location): .exclusive and .throttled at once")
            }
            if isThrottled, !uses(SuiteTraitsTests.ioMarkers) {
                found.append("\(location): a pure suite (no server, process, thread or file) is .throttled")
            }
            return found
        }
    }

    /// The top-level suites of one source file.
    static func suites(in file: String, lines: [Substring]) -> [SuiteSource] {
        let starts = lines.indices.filter { lines[$0].hasPrefix("@Suite") }
        guard let first = starts.first else { return [] }
        func isCode(_ line: Substring) -> Bool { !line.drop { $0 == " " }.hasPrefix("//") }
        let preamble = lines[..<first].filter(isCode)
        return starts.enumerated().map { index, start in
            var end = index + 1 < starts.count ? starts[index + 1] : lines.count
            // The next suite's doc comment and attributes are its own.
            while end > start + 1, lines[end - 1].hasPrefix("///") || lines[end - 1].hasPrefix("@") { end -= 1 }
            var headerStart = start
            while headerStart > 0, lines[headerStart - 1].hasPrefix("///") || lines[headerStart - 1].hasPrefix("@") { headerStart -= 1 }
            // An attribute may go on over several lines, until its parentheses close.
            var attribute = String(lines[start]), next = start + 1
            while attribute.count(where: { $0 == "(" }) > attribute.count(where: { $0 == ")" }), next < end {
                attribute += " " + lines[next].trimmingCharacters(in: .whitespaces)
                next += 1
            }
            return SuiteSource(file: file, line: start + 1, attribute: attribute,
                               header: lines[headerStart..<start].map(String.init),
                               code: (preamble + lines[start..<end].filter(isCode)).map(String.init))
        }
    }

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

    @Test func everySuiteKeepsTheHouseRules() throws {
        let sources = try Self.sources()
        #expect(sources.count > 100, "the test sources were found")
        var suites: [SuiteSource] = []
        for (name, lines) in sources {
            // This file quotes every marker; its rules are checked on made-up suites below.
            if name != Self.ownFile { suites += Self.suites(in: name, lines: lines) }
            // A top-level test function belongs to no suite, so no rule of a suite reaches it.
            for (index, line) in lines.enumerated() where line.hasPrefix("@Test") {
                Issue.record("\(name):\(index + 1): a test outside any suite")
            }
        }
        #expect(suites.count > 100)
        for violation in suites.flatMap(\.violations) {
            Issue.record("\(violation)")
        }
        // Both kinds are there: the rules neither made everything exclusive nor nothing.
        let exclusive = suites.filter(\.isExclusive).count
        #expect(exclusive > 10 && exclusive < suites.count / 2, "\(exclusive) of \(suites.count) suites are exclusive")
    }

    /// The rules themselves, on made-up suites: each breach is caught, a suite that keeps them is not.
    @Test(arguments: [
        ("@Suite(.throttled) struct A {\n  @Test func f() throws { let s = try HaulServer()\n s.setResource(\"/f\", .init(size: 9, rate: 400_000)) }\n}",
         ["paces or times real work but is not .exclusive and .serialized: a paced resource"]),
        ("@Suite struct A {\n  @Test func f() async throws { let s = try HaulServer()\n _ = try await haul([s.url(\"/bytes/9\")], in: dir) }\n}",
         ["neither .exclusive nor .throttled"]),
        ("@Suite(.throttled) struct A {\n  @Test func f() { #expect(Parser.parse(\"a\") == 1) }\n}",
         ["a pure suite (no server, process, thread or file) is .throttled"]),
        ("/// Exclusive: it kills `haul` at random moments.\n@Suite(.exclusive, .serialized, .throttled) struct A {\n  @Test func f() async { let p = try KillableProcess([], in: dir) }\n}",
         [".exclusive and .throttled at once"]),
        ("@Suite(.serialized) struct A {\n  @Test func f() async { let s = try HaulServer(configuration: .init(rateLimit: 100_000)) }\n}",
         ["paces or times real work", ".serialized without a `/// Serialized: why` line", "neither .exclusive nor .throttled"]),
        ("@Suite(.exclusive, .serialized) struct A {\n  @Test func f() async { let p = try KillableProcess([], in: dir) }\n}",
         [".exclusive without a `/// Exclusive: why` line"]),
        ("/// Exclusive: times the wait.\n@Suite(.exclusive) struct A {\n  @Test func f() { let t = Thread {}\n let e = ContinuousClock.now - start }\n}",
         ["paces or times real work", ".exclusive without .serialized"]),
        ("/// Exclusive: nothing to say really.\n@Suite(.exclusive, .serialized) struct A {\n  @Test func f() { #expect(1 + 1 == 2) }\n}",
         ["a pure suite (no server, process, thread or file) is .exclusive"]),
        ("/// Parses.\n///\n/// Exclusive: it kills `haul` at random moments.\n@MainActor\n@Suite(.exclusive, .serialized) struct A {\n  @Test func f() async { let p = try KillableProcess([], in: dir) }\n}",
         []),
        ("@Suite struct A {\n  // rate: 400_000 in a comment, and --limit-rate parsed only:\n  @Test func f() throws { #expect(try parse([\"--limit-rate=5K\"]).rateLimit == 5120) }\n}",
         []),
        ("/// Serialized: the tests share one folder.\n@Suite(.serialized) struct A {\n  @Test func f() throws { try withTemporaryDirectory { _ in } }\n}",
         []),
        ("@Suite(.throttled, .timeLimit(.minutes(1))) struct A {\n  @Test func f() async throws { let s = try HaulServer()\n _ = try await haul([s.url(\"/bytes/9\")], in: dir) }\n}",
         []),
    ])
    func theRulesCatchEachBreach(source: String, expected: [String]) {
        let found = Self.suites(in: "T.swift", lines: source.split(separator: "\n", omittingEmptySubsequences: false)).flatMap(\.violations)
        #expect(found.count == expected.count, "\(found)")
        for fragment in expected {
            #expect(found.contains { $0.contains(fragment) }, "\(fragment) not in \(found)")
        }
    }

    /// A top-level type with tests but without `@Suite` is a suite the rules do not see.
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
                    Issue.record("\(name):\(open.line): \(open.declaration) has tests but no @Suite")
                    current = nil
                }
            }
        }
    }
}
