import HaulMetalink
import Testing

@Suite("Metalink file names are relative paths checked by Unicode scalars")
struct MetalinkNameTests {
    @Test("names that could leave the folder or hide a control character are refused", arguments: [
        "", "../x", "..", ".", "./a", "a/.", "a/..", "/etc/x", "a/../../b", "a\\b", "..\\x", "a//b", "a/", "/",
        "/\u{338}etc/passwd", "a\u{0}b", "a\nb", "a\rb", "a\u{1B}[2Jb", "a\u{7F}", "a\u{85}b", "a\u{9F}",
        String(repeating: "n", count: 256), String(repeating: "d/", count: 2048) + "f",
    ])
    func refused(_ name: String) {
        #expect(Metalink.File.nameProblem(name) != nil, "\(Array(name.unicodeScalars))")
    }

    @Test("ordinary relative names, Unicode ones included, pass", arguments: [
        "a.iso", "dir/sub/a.iso", "..a", "a..", "...", ".hidden", "é/x", "e\u{301}", "a/\u{338}b", "日本語.txt",
        String(repeating: "n", count: 255), "a b",
    ])
    func accepted(_ name: String) {
        #expect(Metalink.File.nameProblem(name) == nil, "\(Array(name.unicodeScalars))")
    }

    @Test("a '/' followed by a combining mark is still a separator: one Character, two scalars")
    func combiningSlash() {
        let name = "/\u{338}etc/passwd"
        #expect(name.first != "/")          // what a Character-based check would see
        #expect(Metalink.File.nameProblem(name) == "it is absolute")
        #expect(Metalink.File.nameProblem("a/\u{338}/../b") == "it has a '.' or '..' component")
    }

    @Test("a file with a refused name is skipped; its name is redacted in the warning", arguments: [
        ("../x", "file '../x' skipped: its name is refused: it has a '.' or '..' component"),
        ("/etc/x", "file '/etc/x' skipped: its name is refused: it is absolute"),
        ("a&#10;b", "file 'a?b' skipped: its name is refused: it has the control character U+000A"),
        ("a&#x9B;[2J", "file 'a?[2J' skipped: its name is refused: it has the control character U+009B"),
        ("a\\b", "file 'a\\b' skipped: its name is refused: it has a backslash"),
    ])
    func skippedInDocument(_ name: String, warning: String) throws {
        let bytes = Documents.document("""
        <file name="\(name)"><url>http://e/bad</url></file><file name="ok"><url>http://e/ok</url></file>
        """)
        let document = try Metalink.parse(bytes)
        #expect(document.files.map(\.name) == ["ok"])
        #expect(document.warnings == [warning])
    }

    @Test("a file name with a tab or newline written directly is read as a space (attribute normalization)")
    func attributeWhitespace() throws {
        let document = try Metalink.parse(Documents.document("<file name=\"a\tb\nc\"><url>http://e/a</url></file>"))
        #expect(document.files.first?.name == "a b c")
    }
}
