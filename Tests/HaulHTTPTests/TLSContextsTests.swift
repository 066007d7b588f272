import CHaulTLS
import Testing
@testable import HaulHTTP

/// A downloader's TLS contexts: one per set of settings, made once and shared.
@Suite struct TLSContextsTests {
    @Test func eachSetOfSettingsHasOneContextMadeOnce() throws {
        let contexts = TLSContexts()
        let plain = TLSSettings()
        let insecure = TLSSettings(insecure: true)
        #expect(contexts.cache(for: plain) === contexts.cache(for: plain))
        #expect(contexts.cache(for: plain) !== contexts.cache(for: insecure))
        let first = try contexts.cache(for: plain).get()
        #expect(try contexts.cache(for: plain).get() === first, "the trust store is loaded once")
        #expect(try contexts.cache(for: insecure).get() !== first)
    }

    @Test func aBadCAFileFailsEveryTimeAndIsNotKept() {
        let cache = TLSContexts().cache(for: TLSSettings(extraCAFile: "/nonexistent/ca.pem"))
        #expect(throws: HTTPClientError.self) { try cache.get() }
        #expect(throws: HTTPClientError.self) { try cache.get() }
    }

    @Test func theLibraryVersionIsTheLoadedOpenSSLs() {
        // OpenSSL 3 also reports its version as a number, 0xMNN00PP0: major, minor, patch.
        let number = OpenSSL_version_num()
        let (major, minor, patch) = (number >> 28, number >> 20 & 0xff, number >> 4 & 0xff)
        #expect(major >= 3, "Haul needs OpenSSL 3 or later")
        #expect(TLSContext.libraryVersion == "OpenSSL \(major).\(minor).\(patch)")
    }
}
