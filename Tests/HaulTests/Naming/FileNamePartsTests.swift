import HaulTestSupport
import Testing
@testable import Haul

@Suite struct FileNamePartsTests {
    @Test(arguments: [
        ("a.txt", "a", "txt"),
        ("archive.tar.gz", "archive", "tar.gz"),
        ("A.TAR.BZ2", "A", "TAR.BZ2"),
        ("a.tar.xz", "a", "tar.xz"),
        ("a.tar.zst", "a", "tar.zst"),
        ("tar.gz", "tar", "gz"),
        ("a.b.c", "a.b", "c"),
        ("v1.2", "v1", "2"),
        ("a." + String(repeating: "x", count: 16), "a", String(repeating: "x", count: 16)),
    ])
    func splitsExtension(name: String, stem: String, ext: String) {
        let parts = FileNameParts(name)
        #expect(parts.stem == stem)
        #expect(parts.fileExtension == ext)
        #expect(parts.name == name)
    }

    @Test(arguments: ["README", "_bashrc", ".hidden", "notes.", "Mr. Smith", "a." + String(repeating: "x", count: 17)])
    func noExtension(name: String) {
        let parts = FileNameParts(name)
        #expect(parts.stem == name)
        #expect(parts.fileExtension == nil)
    }

    @Test(arguments: [
        ("héllo", 3, "hé"),
        ("héllo", 2, "h"),
        ("e\u{301}x", 2, "e"),
        ("e\u{301}x", 3, "e\u{301}"),
        ("😀", 3, ""),
        ("abc", 10, "abc"),
    ])
    func truncatesOnBoundaries(text: String, maxBytes: Int, expected: String) {
        #expect(text.truncatedToUTF8(maxBytes: maxBytes) == expected)
    }
}
