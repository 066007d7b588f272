import HaulTestSupport
import Testing
@testable import HaulHTTP
import HaulCore

/// RFC 3986 §5.2.4 `remove_dot_segments`, and its shortcut for paths without `.` or `..` segments.
@Suite("Dot segments")
struct DotSegmentTests {
    @Test("the RFC's examples", arguments: [
        ("/a/b/c/./../../g", "/a/g"),
        ("mid/content=5/../6", "mid/6"),
        ("/./a", "/a"),
        ("/a/..", "/"),
        ("/a/.", "/a/"),
        ("../a", "a"),
        (".", ""),
        ("..", ""),
    ])
    func examples(input: String, expected: String) {
        #expect(removingDotSegments(input) == expected)
    }

    @Test("a path whose segments are never exactly . or .. comes back as it is",
          arguments: ["", "/", "//", "/a//b/", "/.../b", "/.a/b.", "/a..b/c", "/..../", "a/b", "/%2E%2E/x", "/file-0001.bin"])
    func unchanged(path: String) {
        #expect(removingDotSegments(path) == path)
    }
}
