import Foundation
@testable import Haul
import HaulTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Finished files get 0666 less the umask, read without ever setting it.
@Suite("File modes")
struct FileModeTests {
    @Test("the Umask line of a status text", arguments: [
        ("Name:\thaul\nUmask:\t0022\nState:\tR\n", mode_t(0o022) as mode_t?),
        ("Umask:\t0077\n", 0o077),
        ("Umask:\t0000", 0),
        ("Umask:\t0089\n", nil),          // not octal
        ("Umask:\t\n", nil),
        ("Name:\thaul\n", nil),
    ] as [(String, mode_t?)])
    func parsesTheUmaskLine(text: String, expected: mode_t?) {
        #expect(FileMode.parseUmask(in: Array(text.utf8)[...]) == expected)
    }

    #if os(Linux)
    @Test("the umask read from /proc is the one a new file gets")
    func readUmaskMatchesANewFile() throws {
        try withTemporaryDirectory { dir in
            let path = dir.appendingPathComponent("probe").path
            let fd = open(path, O_CREAT | O_EXCL | O_WRONLY, 0o666)
            try #require(fd >= 0)
            defer { close(fd) }
            var info = stat()
            #expect(fstat(fd, &info) == 0)
            #expect(FileMode.forFinishedFiles() == info.st_mode & 0o777)
        }
    }
    #endif
}
