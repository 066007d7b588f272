import Foundation
import HaulCore
import HaulTestSupport
import Testing
@testable import Haul

/// Names a server proposes that become a separator or a dot component once normalized (NFKC,
/// NFKD) or once read by `Character`: the namer's name is always one plain component.
@Suite struct NormalizedNameTests {
    @Test(arguments: [
        ("..\u{FF0F}..\u{FF0F}etc\u{FF0F}passwd", "passwd"),
        ("a\u{FF3C}b.txt", "b.txt"),
        ("x\u{2100}y.txt", "y.txt"),
        ("\u{2024}\u{2024}\u{FF0F}x.txt", "x.txt"),
        ("\u{2025}hidden", "_hidden"),
        ("\u{FF0E}profile", "_profile"),
        ("name\u{2024}", "name"),
        ("../\u{301}x.txt", "\u{301}x.txt"),
        ("a\u{600}/b.txt", "b.txt"),
    ])
    func aNormalizedSeparatorOrDotIsOneToo(raw: String, expected: String) throws {
        let disposition = "attachment; filename*=UTF-8''" + raw.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        let name = FileNamer.name(contentDisposition: disposition, originalURLPath: "/x.bin", contentType: nil)
        #expect(name.unicodeScalars.elementsEqual(expected.unicodeScalars))
    }

    @Test(arguments: ["\u{2024}", "\u{2025}", "\u{FF0E}\u{FF0E}", "\u{2026}", "\u{FE52}\u{FE52}"])
    func dotLeadersAloneLeaveNothing(raw: String) {
        #expect(FileNameSanitizer.sanitize(raw) == nil)
    }

    /// Random names: the name chosen is one component that no normalization form turns into a
    /// separator or a dot component, and a file made under it in a folder is in that folder.
    @Test func randomNamesStayOneComponentInEveryForm() throws {
        try withTemporaryDirectory { folder in
            let pieces = ["/", "\\", ".", "..", "\u{301}", "\u{338}", "\u{600}", "\u{605}", "\0", "\u{1F}", "\u{85}", "\u{FF0F}",
                          "\u{FF3C}", "\u{FE68}", "\u{2024}", "\u{2025}", "\u{FF0E}", "\u{2100}", " ", "a", "é", "x.txt"]
            var generator = SplitMix64(seed: 0x34)
            let real = try #require(folder.path.withCString { realpath($0, nil) })
            defer { free(real) }
            let folderReal = String(cString: real)
            for _ in 0..<3_000 {
                let raw = (0..<Int.random(in: 1...8, using: &generator)).map { _ in pieces.randomElement(using: &generator)! }.joined()
                guard let name = FileNameSanitizer.sanitize(raw) else { continue }
                let forms = [name, name.precomposedStringWithCompatibilityMapping, name.decomposedStringWithCompatibilityMapping,
                             name.precomposedStringWithCanonicalMapping, name.decomposedStringWithCanonicalMapping]
                for form in forms {
                    #expect(!form.unicodeScalars.contains { $0 == "/" || $0 == "\\" || $0.value < 0x20 }, "\(Array(raw.unicodeScalars))")
                    #expect(form.unicodeScalars.first != ".", "\(Array(raw.unicodeScalars))")
                }
                let fd = open(folder.path + "/" + name, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
                #expect(fd >= 0, "\(Array(name.unicodeScalars))")
                close(fd)
                let made = (folder.path + "/" + name).withCString { realpath($0, nil) }
                #expect(made.map { String(cString: $0) } == folderReal + "/" + name)
                free(made)
            }
        }
    }
}
