import HaulTestSupport
import Testing
@testable import Haul

@Suite struct FileNameSanitizerTests {
    @Test(arguments: [
        ("../../x", "x"),
        ("/abs/x", "x"),
        (#"..\..\x"#, "x"),
        (#"C:\Windows\system.ini"#, "system.ini"),
        (#"a/b\c.txt"#, "c.txt"),
        ("dir/", "dir"),
        ("a//b", "b"),
        ("report.pdf", "report.pdf"),
        ("résumé 2024.pdf", "résumé 2024.pdf"),
    ])
    func keepsLastComponent(raw: String, expected: String) {
        #expect(FileNameSanitizer.sanitize(raw) == expected)
    }

    @Test(arguments: [".", "..", "", "/", "\\", "   ", "...", ". .", "x/..", "../", "\u{0}", "\u{1B}\u{7F}"])
    func nothingUsableGivesNil(raw: String) {
        #expect(FileNameSanitizer.sanitize(raw) == nil)
    }

    @Test(arguments: [
        ("a\u{0}b.txt", "ab.txt"),
        ("\u{1B}[31mred.txt", "[31mred.txt"),
        ("line\nbreak\r.txt", "linebreak.txt"),
        ("tab\there.txt", "tabhere.txt"),
        ("del\u{7F}.txt", "del.txt"),
        ("c1\u{85}\u{9B}.txt", "c1.txt"),
        ("x\u{0}/y", "y"),
        ("y/\u{0}", "y"),
        // A right-to-left override would display "evilexe.pdf".
        ("evil\u{202E}fdp.exe", "evilfdp.exe"),
        ("a\u{200F}\u{2066}b\u{2069}.txt", "ab.txt"),
    ])
    func removesControlCharacters(raw: String, expected: String) {
        #expect(FileNameSanitizer.sanitize(raw) == expected)
    }

    @Test(arguments: [
        (String(decoding: [0x61, 0xFF, 0x62] as [UInt8], as: UTF8.self), "a_b"),
        ("caf\u{FFFD}.txt", "caf_.txt"),
        ("\u{FFFD}", "_"),
    ])
    func replacesReplacementCharacter(raw: String, expected: String) {
        #expect(FileNameSanitizer.sanitize(raw) == expected)
    }

    @Test(arguments: [
        (".hidden", "_hidden"),
        (".bashrc", "_bashrc"),
        ("..hidden", "_.hidden"),
        ("  .profile", "_profile"),
        ("  name.txt  ", "name.txt"),
        ("name.txt...", "name.txt"),
        ("name. . ", "name"),
        ("\u{3000}wide\u{A0}", "wide"),
        (".\u{34B}x.html", "_\u{34B}x.html"),   // a dot and a combining mark are one Character
        ("a/\u{30F}b", "\u{30F}b"),                // and so are a slash and a combining mark
        ("a\\\u{30F}", "\u{30F}"),
    ])
    func dotsAndWhitespace(raw: String, expected: String) {
        #expect(FileNameSanitizer.sanitize(raw) == expected)
    }

    @Test(arguments: [
        ("x.part", "x.part_"),
        ("x.resume", "x.resume_"),
        ("x.lock", "x.lock_"),
        ("X.PART", "X.PART_"),
        ("x.Resume", "x.Resume_"),
        ("x.part.", "x.part_"),
        ("x.part_", "x.part_"),
        ("x.partial", "x.partial"),
        ("x.part.zip", "x.part.zip"),
        (".part", "_part"),
        ("part", "part"),
    ])
    func reservedSuffixes(raw: String, expected: String) {
        #expect(FileNameSanitizer.sanitize(raw) == expected)
    }

    @Test(arguments: [
        // ASCII, extension kept.
        (String(repeating: "a", count: 296) + ".txt", String(repeating: "a", count: 244) + ".txt"),
        // Two-byte characters: 122 × 2 + 4 = 248.
        (String(repeating: "é", count: 148) + ".txt", String(repeating: "é", count: 122) + ".txt"),
        // Three-byte characters: 81 × 3 + 4 = 247, an 82nd would not fit.
        (String(repeating: "€", count: 99) + ".txt", String(repeating: "€", count: 81) + ".txt"),
        // Four-byte characters: 61 × 4 + 4 = 248.
        (String(repeating: "😀", count: 74) + ".pdf", String(repeating: "😀", count: 61) + ".pdf"),
        // A letter and its combining accent (3 bytes) are never separated: 82 × 3 = 246.
        (String(repeating: "e\u{301}", count: 100), String(repeating: "e\u{301}", count: 82)),
        // Family emoji (25 bytes per Character): 9 × 25 + 4 = 229, a 10th would not fit.
        (String(repeating: "👨‍👩‍👧‍👦", count: 12) + ".png", String(repeating: "👨‍👩‍👧‍👦", count: 9) + ".png"),
        // No extension: the end is cut.
        (String(repeating: "a", count: 300), String(repeating: "a", count: 248)),
        // An "extension" over 16 bytes is not kept; the cut falls inside it.
        (String(repeating: "a", count: 200) + "." + String(repeating: "b", count: 99),
         String(repeating: "a", count: 200) + "." + String(repeating: "b", count: 47)),
        // A cut that leaves a trailing dot trims it.
        (String(repeating: "a", count: 247) + "." + String(repeating: "b", count: 52), String(repeating: "a", count: 247)),
        // .tar.gz is kept whole.
        (String(repeating: "a", count: 300) + ".tar.gz", String(repeating: "a", count: 241) + ".tar.gz"),
        // Reserved suffix on a long name: still within 248 bytes with the `_`.
        (String(repeating: "a", count: 300) + ".part", String(repeating: "a", count: 242) + ".part_"),
        // One Character longer than the budget: cut between scalars (1 + 121 × 2 = 243).
        ("e" + String(repeating: "\u{301}", count: 200) + ".txt", "e" + String(repeating: "\u{301}", count: 121) + ".txt"),
    ])
    func longNamesAreShortened(raw: String, expected: String) throws {
        #expect(raw.utf8.count >= 300)
        let name = try #require(FileNameSanitizer.sanitize(raw))
        #expect(name == expected)
        #expect(name.utf8.count <= 248)
        #expect(String(validating: Array(name.utf8), as: UTF8.self) == name)
        #expect(name.utf8.count + ".resume".utf8.count <= 255)
    }

    @Test func limitLeavesRoomForOurSuffixes() {
        #expect(FileNameSanitizer.maximumByteCount == 248)
        let exact = String(repeating: "a", count: 244) + ".txt"
        #expect(FileNameSanitizer.sanitize(exact) == exact)
    }

    /// Sanitising twice gives the same result as sanitising once.
    @Test(arguments: [
        "../../x", ".hidden", "x.part", "X.LOCK.", "a\u{0}b", "  . x . ", "\u{FFFD}.txt",
        String(repeating: "€", count: 99) + ".txt", String(repeating: "a", count: 300) + ".resume",
        "e" + String(repeating: "\u{301}", count: 300),
    ])
    func idempotent(raw: String) throws {
        let once = try #require(FileNameSanitizer.sanitize(raw))
        #expect(FileNameSanitizer.sanitize(once) == once)
    }
}

/// The shortcuts for plain ASCII names give what the step-by-step code gives, over every name of
/// up to three characters from an alphabet of the characters each step looks at, and over
/// names at the length limit and with reserved suffixes.
@Suite struct FileNameShortcutTests {
    static let alphabet = ["a", "Z", "0", ".", "-", "_", " ", "\t", "/", "\\", "~", "\u{7F}", "é", "\u{301}", "\u{0}",
                           "\u{85}", "\u{202E}", "\u{FFFD}"]
    static let names: [String] = {
        var names = [""]
        for length in 1...3 {
            names += names.filter { $0.unicodeScalars.count == length - 1 }.flatMap { prefix in alphabet.map { prefix + $0 } }
        }
        let limit = FileNameSanitizer.maximumByteCount
        names += [String(repeating: "x", count: limit), String(repeating: "x", count: limit + 1),
                  String(repeating: "x", count: limit - 4) + ".txt", String(repeating: "x", count: limit - 3) + ".txt"]
        names += FileNameSanitizer.reservedSuffixes.flatMap { ["a" + $0, "a" + $0.uppercased(), $0, "a" + $0 + "x"] }
        names += ["a.tar.gz", "A.TAR.BZ2", "tar.gz", ".tar.gz", "x.tar.zst", "a.b.c", "a." + String(repeating: "x", count: 16),
                  "a." + String(repeating: "x", count: 17), "Mr. Smith", "notes.", "v1.2", "e\u{301}.txt", "a.t\u{301}"]
        return names
    }()

    @Test func sanitizeAgreesWithTheStepByStepCode() {
        #expect(Self.names.count > 2_000)
        let differing = Self.names.filter { FileNameSanitizer.sanitize($0) != FileNameSanitizer.sanitizeStepByStep($0) }
        #expect(differing.isEmpty, "\(differing.map(\.debugDescription))")
    }

    @Test func hasExtensionAgreesWithTheSplit() {
        let differing = Self.names.filter { FileNameParts.hasExtension($0) != (FileNameParts($0).fileExtension != nil) }
        #expect(differing.isEmpty, "\(differing.map(\.debugDescription))")
        #expect(FileNameParts.hasExtension("a.txt") && FileNameParts.hasExtension("a.TAR.GZ") && !FileNameParts.hasExtension("README"))
    }

    @Test func suffixComparisonIgnoresASCIICaseOnly() {
        #expect(FileNameParts.hasASCIISuffixIgnoringCase("A.PART", ".part"))
        #expect(!FileNameParts.hasASCIISuffixIgnoringCase("a.pärt", ".part"))
        #expect(!FileNameParts.hasASCIISuffixIgnoringCase("art", ".part"))
        #expect(FileNameParts.hasASCIISuffixIgnoringCase(".part", ".part"))
    }
}
