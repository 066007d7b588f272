import Foundation
import HaulTestSupport
import Testing
@testable import Haul
import HaulCrypto

/// The mark a finished download leaves on its file, without I/O: its encoding, and which
/// responses it matches.
@Suite struct FinishedFileMarkTests {
    static let key = String(repeating: "ab", count: 32)
    static let date = "Tue, 01 Dec 2026 00:00:00 GMT"

    static func identity(key: String = key, length: Int64 = 1000, etag: String? = "\"v1\"",
                         lastModified: String? = date) -> FinishedFileMark.Identity? {
        FinishedFileMark.Identity(resourceKey: key, length: length, etag: etag, lastModified: lastModified)
    }

    @Test(arguments: [
        identity(),
        identity(etag: nil),
        identity(length: 0, etag: "\"caf\u{E9}\""),
    ])
    func roundTrips(identity: FinishedFileMark.Identity?) throws {
        let mark = FinishedFileMark(identity: try #require(identity), modified: timespec(tv_sec: 1_764_547_200, tv_nsec: 999_999_999))
        #expect(FinishedFileMark(decoding: mark.encoded) == mark)
    }

    /// Small enough for ext4 to keep inside a 256-byte inode (see the type's documentation).
    @Test func theEncodingIsVersionDigestSecondsNanoseconds() throws {
        let identity = try #require(Self.identity(lastModified: nil))
        let mark = FinishedFileMark(identity: identity, modified: timespec(tv_sec: 0x0102_0304_0506_0708, tv_nsec: 0x0A0B_0C0D))
        let bytes = mark.encoded
        #expect(bytes.count == 45)
        #expect(bytes[0] == 1)
        #expect(Array(bytes[1..<33]) == Digest.hash(.sha256, Array("\(Self.key)1000\netag \"v1\"".utf8)))
        #expect(Array(bytes[33..<45]) == [8, 7, 6, 5, 4, 3, 2, 1, 0x0D, 0x0C, 0x0B, 0x0A])
    }

    /// Anything but a mark of this format is no mark: the file is then not recognised.
    @Test(arguments: [
        [UInt8](),
        [2] + [UInt8](repeating: 0, count: 44),                         // another version
        [1] + [UInt8](repeating: 0, count: 43),                         // truncated
        [1] + [UInt8](repeating: 0, count: 45),                         // too long
        [1] + [UInt8](repeating: 0, count: 40) + [0x00, 0xCA, 0x9A, 0x3B],   // 1,000,000,000 ns
    ])
    func malformedMarksAreNone(bytes: [UInt8]) {
        #expect(FinishedFileMark(decoding: bytes) == nil)
    }

    @Test func noValidatorNoIdentity() {
        #expect(Self.identity(etag: nil, lastModified: nil) == nil)
    }

    /// The validator `If-Range` would use decides: the strong ETag when there is one, else
    /// `Last-Modified`; and the resource and length.
    @Test(arguments: [
        (identity(), identity(), true),
        (identity(), identity(lastModified: "Wed, 02 Dec 2026 00:00:00 GMT"), true),   // the ETag decides
        (identity(), identity(lastModified: nil), true),
        (identity(), identity(etag: "\"v2\""), false),
        (identity(), identity(etag: nil), false),                                        // the ETag is gone
        (identity(etag: nil), identity(etag: nil), true),
        (identity(etag: nil), identity(etag: nil, lastModified: "Wed, 02 Dec 2026 00:00:00 GMT"), false),
        (identity(etag: nil), identity(etag: "\"v9\""), false),                          // an ETag appeared: the safe side
        (identity(), identity(length: 1001), false),
        (identity(), identity(key: String(repeating: "cd", count: 32)), false),
        (identity(etag: "\"a\""), identity(etag: nil, lastModified: "\"a\""), false),    // not the same kind of validator
    ])
    func whichResponsesMatch(marked: FinishedFileMark.Identity?, response: FinishedFileMark.Identity?, same: Bool) throws {
        #expect((try #require(response) == (try #require(marked))) == same)
    }
}
