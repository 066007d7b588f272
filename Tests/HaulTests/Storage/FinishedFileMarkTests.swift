import Foundation
import Testing
@testable import Haul

/// The mark a finished download leaves on its file, without I/O: its encoding, and which
/// responses it matches.
@Suite struct FinishedFileMarkTests {
    static let key = String(repeating: "ab", count: 32)

    static func identity(key: String = key, length: Int64 = 1000, etag: String? = "\"v1\"",
                         lastModified: String? = "Tue, 01 Dec 2026 00:00:00 GMT") -> FinishedFileMark.Identity? {
        FinishedFileMark.Identity(resourceKey: key, length: length, etag: etag, lastModified: lastModified)
    }

    @Test(arguments: [
        identity(),
        identity(etag: nil),
        identity(lastModified: nil),
        identity(length: 0, etag: "\"caf\u{E9}\""),
    ])
    func roundTrips(identity: FinishedFileMark.Identity?) throws {
        let mark = FinishedFileMark(identity: try #require(identity), modified: timespec(tv_sec: 1_764_547_200, tv_nsec: 123_456_789))
        #expect(FinishedFileMark(decoding: mark.encoded) == mark)
    }

    @Test func theEncodingIsReadableLines() throws {
        let mark = FinishedFileMark(identity: try #require(Self.identity(lastModified: nil)), modified: timespec(tv_sec: 5, tv_nsec: 7))
        #expect(String(decoding: mark.encoded, as: UTF8.self)
                == "haul-finished 1\nresource \(Self.key)\nlength 1000\nmodified 5.7\netag \"v1\"\n")
    }

    /// Anything but a complete mark of this format is no mark: the file is then not recognised.
    @Test(arguments: [
        "",
        "haul-finished 2\nresource \(key)\nlength 1000\nmodified 5.7\netag \"v1\"\n",
        "haul-finished 1\nresource \(key)\nlength 1000\nmodified 5.7\netag \"v1\"",          // truncated
        "haul-finished 1\nresource \(key)\nlength 1000\nmodified 5.7\n",                     // no validator
        "haul-finished 1\nresource \(key)\nmodified 5.7\netag \"v1\"\n",                     // no length
        "haul-finished 1\nresource \(key)\nlength 1000\netag \"v1\"\n",                      // no time
        "haul-finished 1\nresource abc\nlength 1000\nmodified 5.7\netag \"v1\"\n",           // short key
        "haul-finished 1\nresource \(key)\nlength x\nmodified 5.7\netag \"v1\"\n",
        "haul-finished 1\nresource \(key)\nlength 1000\nmodified 5.1000000000\netag \"v1\"\n",
        "haul-finished 1\nresource \(key)\nlength 1000\nmodified 5.7\netag \"v1\"\netag \"v2\"\n",
        "haul-finished 1\nresource \(key)\nlength 1000\nmodified 5.7\netag \"v1\"\nowner me\n",
        "haul-finished 1\nresource \(key)\nlength 1000\nmodified 5.7\n\netag \"v1\"\n",
    ])
    func malformedMarksAreNone(text: String) {
        #expect(FinishedFileMark(decoding: Array(text.utf8)) == nil)
    }

    @Test func noValidatorNoIdentity() {
        #expect(Self.identity(etag: nil, lastModified: nil) == nil)
    }

    /// The validator `If-Range` would use decides: the strong ETag when the file had one, else
    /// `Last-Modified`.
    @Test(arguments: [
        (identity(), identity(), true),
        (identity(), identity(lastModified: "Wed, 02 Dec 2026 00:00:00 GMT"), true),   // the ETag decides
        (identity(), identity(etag: "\"v2\""), false),
        (identity(), identity(etag: nil), false),                                        // the ETag is gone
        (identity(etag: nil), identity(etag: "\"v9\""), true),                           // Last-Modified decides
        (identity(etag: nil), identity(etag: nil, lastModified: "Wed, 02 Dec 2026 00:00:00 GMT"), false),
        (identity(), identity(length: 1001), false),
        (identity(), identity(key: String(repeating: "cd", count: 32)), false),
    ])
    func whichResponsesMatch(marked: FinishedFileMark.Identity?, response: FinishedFileMark.Identity?, same: Bool) throws {
        #expect(try #require(response).isSame(as: try #require(marked)) == same)
    }
}
