import Haul
@testable import HaulCLI
import HaulTestSupport
import Testing

/// Runs the built `haul` executable for behaviour that needs no network.
@Suite(.throttled) struct ProcessTests {
    @Test func helpGoesToStandardOutput() async throws {
        for flag in ["--help", "-h"] {
            let outcome = try await HaulBinary.run([flag])
            #expect(outcome.status == 0)
            #expect(outcome.standardOutput == HelpText.download)
            #expect(outcome.standardError.isEmpty)
        }
    }

    @Test func versionNamesTheBuildTheCompilerAndTheLoadedOpenSSL() async throws {
        let outcome = try await HaulBinary.run(["--version"])
        #expect(outcome.status == 0)
        #expect(outcome.standardError.isEmpty)
        let line = /haul (\d+\.\d+\.\d+) \(commit ([0-9A-Za-z.+-]+), Swift (\d+\.\d+(?:\.\d+)?), (OpenSSL \d+\.\d+\.\d+)\)\n/
        let match = try #require(outcome.standardOutput.wholeMatch(of: line), "\(outcome.standardOutput)")
        #expect(match.1 == HaulInfo.version)
        #expect(match.2 == "unknown", "the test build is a plain `swift build`, which names no commit")
        #expect(match.3 == HaulInfo.swiftVersion)
        #expect(match.4 == HaulInfo.tlsLibrary, "the OpenSSL this process loaded")
    }

    @Test func unknownOptionIsAUsageErrorWithTheHint() async throws {
        let outcome = try await HaulBinary.run(["--frobnicate", "http://127.0.0.1/x"])
        #expect(outcome.status == 2)
        #expect(outcome.standardError == "haul: unrecognized option '--frobnicate'\nTry 'haul --help' for more information.\n")
        #expect(outcome.standardOutput.isEmpty)
    }

    @Test func badURLExitsTwo() async throws {
        let outcome = try await HaulBinary.run(["http://[::1"])
        #expect(outcome.status == 2)
        #expect(outcome.standardError == "haul: http://[::1: invalid URL\n")
        #expect(outcome.standardOutput.isEmpty)
    }

    @Test func malformedChecksumIsAUsageError() async throws {
        let outcome = try await HaulBinary.run(["--checksum=sha256=00", "http://127.0.0.1/x"])
        #expect(outcome.status == 2)
        #expect(outcome.standardError == "haul: invalid value 'sha256=00' for --checksum: a sha256 digest has 64 hex digits, not 2\n"
                + "Try 'haul --help' for more information.\n")
    }

    @Test func missingURLIsAUsageError() async throws {
        let outcome = try await HaulBinary.run([])
        #expect(outcome.status == 2)
        #expect(outcome.standardError == "haul: missing URL\nTry 'haul --help' for more information.\n")
    }
}
