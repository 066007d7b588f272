import Foundation
import HaulTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
@testable import HaulCore

/// Untrusted folders and names below a root: what ``ContainedPath`` accepts always lands under
/// the root (checked with `realpath` on what was created), what it refuses is what Foundation's
/// normalization says could become a separator, a dot component or a control character.
@Suite
struct ContainedPathTests {
    /// Pieces random paths are made of: separators visible and hidden, dots, combining and
    /// prepended marks, NUL and controls, and scalars whose compatibility form is `/` or dots.
    static let pieces = ["/", "/", ".", "..", "\u{301}", "\u{338}", "\u{600}", "\u{605}", "\0", "\u{1}", "\u{1F}", "\u{7F}",
                         "\u{85}", "\u{FF0F}", "\u{FF0E}", "\u{2024}", "\u{2025}", "\u{FE52}", "\u{2100}", "\u{FF3C}", "\\",
                         "a", "b", "é", " ", "\u{200B}", "x.txt"]

    @Test func hiddenSeparatorsAndDotsAreComponentsOfTheirOwn() throws {
        #expect(throws: ContainedPath.Refusal.self) { try ContainedPath(folder: "../\u{301}x") }
        #expect(throws: ContainedPath.Refusal.self) { try ContainedPath(folder: "x\u{600}/../..") }
        #expect(throws: ContainedPath.Refusal.self) { try ContainedPath.check(component: "../\u{301}x.txt") }
        #expect(throws: ContainedPath.Refusal.self) { try ContainedPath.check(component: "l\u{600}/x.txt") }
        #expect(throws: ContainedPath.Refusal.self) { try ContainedPath.check(component: "..\u{FF0F}x") }
        #expect(throws: ContainedPath.Refusal.self) { try ContainedPath.check(component: "\u{2024}\u{2024}") }
        #expect(throws: ContainedPath.Refusal.self) { try ContainedPath.check(component: "\u{2025}") }
        #expect(throws: ContainedPath.Refusal.self) { try ContainedPath.check(component: "a\0b") }
        #expect(throws: ContainedPath.Refusal.self) { try ContainedPath.check(component: "") }
        #expect(try ContainedPath(folder: "/a//\u{301}b/").components == ["a", "\u{301}b"])
        #expect(try ContainedPath(folder: "").components.isEmpty)
        try ContainedPath.check(component: ".\u{301}")   // not a dot component: the kernel sees three bytes
        try ContainedPath.check(component: "e\u{301}.txt")
    }

    /// The tables of ``ContainedPath`` against Foundation's normalization of every scalar in the
    /// planes that have compatibility mappings.
    @Test func theScalarTablesMatchFoundationsNormalization() {
        for value in UInt32(0)...0x2FFFF {
            guard let scalar = Unicode.Scalar(value) else { continue }
            let text = String(scalar)
            let forms = Self.forms(of: text)
            let slash = forms.contains { $0.unicodeScalars.contains("/") }
            let dots = forms.contains { !$0.isEmpty && $0.unicodeScalars.allSatisfy { $0 == "." } }
            let control = forms.contains { $0.unicodeScalars.contains(where: { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }) }
            #expect(ContainedPath.isSeparatorLike(scalar) == slash, "U+\(String(value, radix: 16))")
            #expect(ContainedPath.isDotLike(scalar) == dots, "U+\(String(value, radix: 16))")
            #expect(ContainedPath.isControl(scalar) == control, "U+\(String(value, radix: 16))")
        }
    }

    /// Random folders and names: each accepted one, created below a root, resolves (`realpath`) to
    /// a path under the root, and no form of an accepted component is `/`-bearing, `.` or `..`.
    @Test(arguments: [UInt64(34), 0x5EED])
    func whatIsAcceptedLandsUnderTheRoot(seed: UInt64) throws {
        try withTemporaryDirectory { sandbox in
            let root = sandbox.appendingPathComponent("root")
            try FileManager.default.createDirectory(at: root, withIntermediateDirectories: false)
            let rootReal = try #require(Self.realPath(root.path))
            let rootFD = try ContainedPath.openRoot(root.path)
            defer { close(rootFD) }
            var generator = SplitMix64(seed: seed)
            var counts = (folders: 0, names: 0, refused: 0)
            for _ in 0..<4_000 {
                let text = Self.randomText(using: &generator)
                if let folder = try? ContainedPath(folder: text) {
                    counts.folders += 1
                    try Self.expectUnder(rootReal, folder: folder, root: root.path, rootFD: rootFD, text: text)
                } else { counts.refused += 1 }
                if (try? ContainedPath.check(component: text)) != nil {
                    counts.names += 1
                    Self.expectFileUnder(rootReal, name: text, root: root.path, rootFD: rootFD)
                }
                #expect(Self.refusedByFoundation(text) == ((try? ContainedPath.check(component: text)) == nil), "\(Self.shown(text))")
            }
            #expect(listFiles(sandbox) == ["root"], "something was created beside the root")
            #expect(counts.folders > 500 && counts.names > 200 && counts.refused > 500, "\(counts)")
            print("ContainedPath property, seed \(seed): 4000 cases, \(counts.folders) folders and \(counts.names) names accepted")
        }
    }

    /// The four normalization forms of `text`, by Foundation.
    static func forms(of text: String) -> [String] {
        [text.precomposedStringWithCanonicalMapping, text.decomposedStringWithCanonicalMapping,
         text.precomposedStringWithCompatibilityMapping, text.decomposedStringWithCompatibilityMapping]
    }

    /// Whether a component must be refused, as worked out from Foundation's normalization alone.
    static func refusedByFoundation(_ component: String) -> Bool {
        if component.isEmpty || component.utf8.count > 255 { return true }
        return ([component] + forms(of: component)).contains { form in
            form.unicodeScalars.contains { $0 == "/" || $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }
                || form.unicodeScalars.allSatisfy { $0 == "." }
        }
    }

    static func randomText(using generator: inout SplitMix64) -> String {
        (0..<Int.random(in: 1...7, using: &generator)).map { _ in pieces.randomElement(using: &generator)! }.joined()
    }

    static func shown(_ text: String) -> String {
        text.unicodeScalars.map { $0.isASCII && $0.value >= 0x20 ? String($0) : "U+\(String($0.value, radix: 16))" }.joined()
    }

    /// `realpath(3)` of `path`, or `nil` when it does not resolve.
    static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// Opens (creating) `folder` below the root and checks where it really is.
    static func expectUnder(_ rootReal: String, folder: ContainedPath, root: String, rootFD: Int32, text: String) throws {
        let fd: Int32
        do {
            fd = try folder.openFolder(below: rootFD, create: true)
        } catch {
            // A component that exists as a file made by an earlier case is not a folder: refused, as it must be.
            #expect(error.reason == .unsafe, "\(shown(text)): \(error)")
            return
        }
        close(fd)
        let real = realPath(folder.absolute(in: root))
        #expect(real == (folder.components.isEmpty ? rootReal : rootReal + "/" + folder.relative), "\(shown(text))")
        for component in folder.components {
            #expect(!forms(of: component).contains { $0 == "." || $0 == ".." || $0.unicodeScalars.contains("/") })
        }
    }

    /// Creates the file `name` in the root (no link followed) and checks where it really is.
    static func expectFileUnder(_ rootReal: String, name: String, root: String, rootFD: Int32) {
        let fd = openat(rootFD, name, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
        if fd >= 0 { close(fd) } else {
            #expect(errno == EISDIR, "\(shown(name)): \(errno)")   // a folder an earlier case made
        }
        let real = realPath(root + "/" + name)
        #expect(real == rootReal + "/" + name, "\(shown(name))")
    }
}

/// A symbolic link swapped in for a folder component after the check is never followed.
@Suite
struct ContainedPathRaceTests {
    @Test func aLinkSwappedInAfterTheCheckIsNotFollowed() throws {
        try withTemporaryDirectory { sandbox in
            let (root, outside) = try Self.rootAndOutside(in: sandbox)
            let rootFD = try ContainedPath.openRoot(root.path)
            defer { close(rootFD) }
            try FileManager.default.createDirectory(at: root.appendingPathComponent("a"), withIntermediateDirectories: false)
            let folder = try ContainedPath(folder: "a/b")
            try folder.checkExisting(below: rootFD)
            // The check passed; now `a` becomes a link to the outside folder.
            try FileManager.default.removeItem(at: root.appendingPathComponent("a"))
            try FileManager.default.createSymbolicLink(atPath: root.path + "/a", withDestinationPath: outside.path)
            #expect(throws: ContainedPath.Refusal.self) { try folder.openFolder(below: rootFD, create: true) }
            #expect(listFiles(outside).isEmpty)
        }
    }

    /// A thread makes `a` a link to the outside folder and removes it, over and over, while
    /// `a/b` is opened (created) below the root: every open lands under the root or is refused.
    @Test func aLinkThatComesAndGoesIsNeverFollowed() throws {
        try withTemporaryDirectory { sandbox in
            let (root, outside) = try Self.rootAndOutside(in: sandbox)
            let rootFD = try ContainedPath.openRoot(root.path)
            defer { close(rootFD) }
            let outsideFD = try ContainedPath.openRoot(outside.path)
            defer { close(outsideFD) }
            let stop = SharedStateLock(false)
            let flipper = Thread {
                while !stop.withLock({ $0 }) {
                    _ = symlinkat(outside.path, rootFD, "a")
                    _ = unlinkat(rootFD, "a", 0)   // a folder made by an open stays (EISDIR) until the opener removes it
                }
            }
            flipper.start()
            defer { stop.withLock { $0 = true } }
            let folder = try ContainedPath(folder: "a/b")
            var counts = (opened: 0, refused: 0)
            for _ in 0..<3_000 {
                if let fd = try? folder.openFolder(below: rootFD, create: true) {
                    counts.opened += 1
                    #expect(ContainedPathTests.realPath("/proc/self/fd/\(fd)") == ContainedPathTests.realPath(root.path)! + "/a/b")
                    close(fd)
                    Self.removeOpenedFolder(below: rootFD)
                } else {
                    counts.refused += 1
                }
                #expect(faccessat(outsideFD, "b", F_OK, 0) != 0, "a/b was made through the link")
            }
            #expect(listFiles(outside).isEmpty)
            print("ContainedPath race: 3000 opens of a/b, \(counts.opened) under the root, \(counts.refused) refused")
        }
    }

    /// Removes `a/b` and `a` when `a` is a real folder (never through a link).
    static func removeOpenedFolder(below rootFD: Int32) {
        let a = openat(rootFD, "a", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard a >= 0 else { return }
        _ = unlinkat(a, "b", AT_REMOVEDIR)
        close(a)
        _ = unlinkat(rootFD, "a", AT_REMOVEDIR)
    }

    static func rootAndOutside(in sandbox: URL) throws -> (root: URL, outside: URL) {
        let root = sandbox.appendingPathComponent("root"), outside = sandbox.appendingPathComponent("outside")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: false)
        try FileManager.default.createDirectory(at: outside, withIntermediateDirectories: false)
        return (root, outside)
    }
}
