import HaulTestSupport
import Testing
@testable import Haul

@Suite struct ConflictResolverTests {
    @Test(arguments: ConflictPolicy.allCases)
    func freeNameIsUsedWhateverThePolicy(policy: ConflictPolicy) {
        #expect(ConflictResolver.resolve(name: "a.txt", policy: policy, exists: { $0 == "other" }) == .use("a.txt"))
    }

    @Test(arguments: [
        (ConflictPolicy.overwrite, ConflictResolution.overwrite("a.txt")),
        (.skip, .skip("a.txt")),
        (.fail, .fail("a.txt")),
        (.rename, .use("a.1.txt")),
    ])
    func existingNameFollowsPolicy(policy: ConflictPolicy, expected: ConflictResolution) {
        #expect(ConflictResolver.resolve(name: "a.txt", policy: policy, exists: { $0 == "a.txt" }) == expected)
    }

    @Test(arguments: [
        ("a.txt", ["a.txt"], "a.1.txt"),
        ("a.txt", ["a.txt", "a.1.txt", "a.2.txt"], "a.3.txt"),
        ("a.txt", ["a.txt", "a.2.txt"], "a.1.txt"),
        ("a.tar.gz", ["a.tar.gz"], "a.1.tar.gz"),
        ("a.tar.gz", ["a.tar.gz", "a.1.tar.gz"], "a.2.tar.gz"),
        ("b.tar.zst", ["b.tar.zst"], "b.1.tar.zst"),
        ("README", ["README"], "README.1"),
        ("README", ["README", "README.1"], "README.2"),
        ("_bashrc", ["_bashrc"], "_bashrc.1"),
        ("x.part_", ["x.part_"], "x.1.part_"),
        ("a.b.c", ["a.b.c"], "a.b.1.c"),
    ])
    func renameSequence(name: String, existing: [String], expected: String) {
        let taken = Set(existing)
        #expect(ConflictResolver.resolve(name: name, policy: .rename, exists: taken.contains) == .use(expected))
    }

    @Test func renameAsksInOrder() {
        var asked: [String] = []
        let taken: Set = ["a.txt", "a.1.txt", "a.2.txt"]
        let result = ConflictResolver.resolve(name: "a.txt", policy: .rename) { name in
            asked.append(name)
            return taken.contains(name)
        }
        #expect(result == .use("a.3.txt"))
        #expect(asked == ["a.txt", "a.1.txt", "a.2.txt", "a.3.txt"])
    }

    @Test func renameGivesUpAfter9999() {
        var asked: [String] = []
        let result = ConflictResolver.resolve(name: "a.txt", policy: .rename) { name in
            asked.append(name)
            return true
        }
        #expect(result == .fail("a.txt"))
        #expect(asked.count == 10_000)
        #expect(asked.last == "a.9999.txt")
    }

    @Test func renameFindsTheLastNumber() {
        let result = ConflictResolver.resolve(name: "a.txt", policy: .rename) { $0 != "a.9999.txt" }
        #expect(result == .use("a.9999.txt"))
    }

    @Test(arguments: [
        // 248 bytes: the stem gives way to ".1" and the extension stays.
        (String(repeating: "a", count: 244) + ".txt", 1, String(repeating: "a", count: 242) + ".1.txt"),
        (String(repeating: "a", count: 244) + ".txt", 10, String(repeating: "a", count: 241) + ".10.txt"),
        (String(repeating: "a", count: 244) + ".txt", 9999, String(repeating: "a", count: 239) + ".9999.txt"),
        (String(repeating: "a", count: 241) + ".tar.gz", 1, String(repeating: "a", count: 239) + ".1.tar.gz"),
        (String(repeating: "a", count: 248), 1, String(repeating: "a", count: 246) + ".1"),
        // Three-byte characters: 80 × 3 + 6 = 246, an 81st would not fit.
        (String(repeating: "€", count: 81) + ".txt", 1, String(repeating: "€", count: 80) + ".1.txt"),
        (String(repeating: "e\u{301}", count: 82), 1, String(repeating: "e\u{301}", count: 82) + ".1"),
        (String(repeating: "e\u{301}", count: 82), 100, String(repeating: "e\u{301}", count: 81) + ".100"),
    ])
    func longNamesKeepWithinTheLimit(name: String, number: Int, expected: String) {
        let taken = Set([name] + (1..<number).map { ConflictResolver.numbered(FileNameParts(name), $0) })
        let result = ConflictResolver.resolve(name: name, policy: .rename, exists: taken.contains)
        #expect(result == .use(expected))
        #expect(expected.utf8.count <= 248)
    }
}

/// A name that holds this download, finished by an earlier run (a rerun after an interruption).
@Suite struct ConflictResolverFinishedTests {
    @Test(arguments: ConflictPolicy.allCases)
    func aFinishedNameIsFinishedWhateverThePolicy(policy: ConflictPolicy) {
        let result = ConflictResolver.resolve(name: "a.txt", policy: policy, exists: { $0 == "a.txt" },
                                              finished: { $0 == "a.txt" })
        #expect(result == .finished("a.txt"))
    }

    /// Another URL had the name first, so this one's earlier run wrote `a.2.txt`.
    @Test func renamingFindsTheFinishedNumberedName() {
        var asked: [String] = []
        let taken: Set = ["a.txt", "a.1.txt", "a.2.txt"]
        let result = ConflictResolver.resolve(name: "a.txt", policy: .rename, exists: taken.contains) { name in
            asked.append(name)
            return name == "a.2.txt"
        }
        #expect(result == .finished("a.2.txt"))
        #expect(asked == ["a.txt", "a.1.txt", "a.2.txt"])
    }

    /// Only taken names are asked about, and the walk stops at the first free one: a finished
    /// file after a gap belongs to an older run, and the free name is used.
    @Test func freeNamesAreNotAskedAndEndTheWalk() {
        var asked: [String] = []
        let taken: Set = ["a.txt", "a.2.txt"]
        let result = ConflictResolver.resolve(name: "a.txt", policy: .rename, exists: taken.contains) { name in
            asked.append(name)
            return name == "a.2.txt"
        }
        #expect(result == .use("a.1.txt"))
        #expect(asked == ["a.txt"])
    }

    /// Without renaming, only the name itself is looked at: other policies never see `a.1.txt`.
    @Test(arguments: [
        (ConflictPolicy.overwrite, ConflictResolution.overwrite("a.txt")),
        (.skip, .skip("a.txt")),
        (.fail, .fail("a.txt")),
    ])
    func otherPoliciesLookOnlyAtTheName(policy: ConflictPolicy, expected: ConflictResolution) {
        let taken: Set = ["a.txt", "a.1.txt"]
        let result = ConflictResolver.resolve(name: "a.txt", policy: policy, exists: taken.contains,
                                              finished: { $0 == "a.1.txt" })
        #expect(result == expected)
    }
}
