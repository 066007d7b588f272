import Foundation
@testable import Haul
import HaulTestSupport
import Testing

/// What the library says of its build: the compiler's version as text, and that it is the
/// compiler of the toolchain running the tests.
@Suite(.throttled) struct HaulInfoTests {
    @Test(arguments: [(60301, "6.3.1"), (60300, "6.3"), (50910, "5.9.10"), (70000, "7.0"), (0, "unknown")])
    func compilerVersionAsText(encoded: Int, text: String) {
        #expect(HaulInfo.swiftVersion(encoded: encoded) == text)
    }

    @Test func swiftVersionIsTheToolchainsOwn() async throws {
        // The tests are built by the toolchain that runs them (`swift test`), whose `swift
        // --version` says "Swift version 6.3.1 (swift-6.3.1-RELEASE)" ("Apple Swift version ..." on macOS).
        let outcome = try await runChildProcess(URL(fileURLWithPath: "/usr/bin/env"), ["swift", "--version"])
        let text = String(decoding: outcome.standardOutput + outcome.standardError, as: UTF8.self)
        #expect(outcome.status == 0)
        #expect(text.contains("Swift version \(HaulInfo.swiftVersion) "), "\(text)")
    }
}
