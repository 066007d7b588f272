import Testing
@testable import Haul

/// The choice between direct and cached writes (``WritePath``): direct for a large file with
/// nothing against it, whatever its connections or checksum; each reason alone keeps the cache.
@Suite("Write path")
struct WritePathTests {
    static let large = BatchCommitter.largestFile + 1

    @Test("a large file on a file system that takes direct writes, unmetered, goes direct")
    func largeFilesGoDirect() {
        #expect(WritePath.choose(size: Self.large, rateLimited: false, minimumSegment: 1 << 20, directWrites: true) == .direct)
        #expect(WritePath.choose(size: 1 << 40, rateLimited: false, minimumSegment: 64 << 10, directWrites: true) == .direct)
    }

    @Test("each reason alone keeps the page cache, the first that applies named",
          arguments: [
            (BatchCommitter.largestFile, false, Int64(1 << 20), true, WritePath.cached(.small)),
            (Int64(1), false, Int64(1 << 20), true, .cached(.small)),
            (large, true, Int64(1 << 20), true, .cached(.rateLimited)),
            (large, false, Int64(64 << 10) - 1, true, .cached(.smallSegments)),
            (large, false, Int64(1 << 20), false, .cached(.noDirectWrites)),
            (BatchCommitter.largestFile, true, Int64(4096), false, .cached(.small)),
          ])
    func reasonsKeepTheCache(size: Int64, rateLimited: Bool, minimumSegment: Int64, directWrites: Bool, expected: WritePath) {
        #expect(WritePath.choose(size: size, rateLimited: rateLimited, minimumSegment: minimumSegment,
                                 directWrites: directWrites) == expected)
    }
}
