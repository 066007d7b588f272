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
}
