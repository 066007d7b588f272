import HaulTestSupport
import Testing
@testable import HaulHTTP
import HaulCore

/// ``LinkHeader`` and ``DuplicateLinks`` over seeded random soups of Link syntax and raw bytes:
/// nothing traps, the bounds hold, and no mirror is less safe than the response.
@Suite struct LinkSoupTests {
    /// Pieces that make the soup likely to hold real links among the junk.
    static let pieces = [
        "<", ">", ";", ",", "\"", "\\", " ", "\t", "=", "rel", "REL", "duplicate", "describedby", "pri", "pref", "geo",
        "depth", "anchor", "type", "application/metalink4+xml", "http://", "https://", "//", "ftp://", "m.example",
        "example.com", "/dir/file.iso", "/f", "@", "u:p@", "1", "999999", "0", "#", "?", "..", "\u{0}", "\u{E9}",
        "<https://m.example/f>; rel=duplicate", "<http://m.example/f>; rel=duplicate; pri=1; pref",
        "<https://example.com/dir/file.iso>; rel=duplicate", #"<f.meta4>; rel=describedby; type="application/metalink4+xml""#,
    ]

    /// One soup of fields: pieces and raw bytes, sometimes far beyond the byte bound.
    static func soup(_ random: inout SplitMix64) -> [String] {
        let fieldCount = Int(random.next() % 4) + 1
        let long = random.next() % 16 == 0
        return (0..<fieldCount).map { _ in
            var bytes: [UInt8] = []
            let length = long ? 9_000 : Int(random.next() % 300)
            while bytes.count < length {
                switch random.next() % 6 {
                case 0: bytes.append(UInt8(truncatingIfNeeded: random.next()))
                case 1, 2: bytes += link(&random).utf8
                default: bytes += pieces[Int(random.next() % UInt64(pieces.count))].utf8
                }
            }
            return String(decoding: bytes, as: UTF8.self)
        }
    }

    /// A well-formed mirror or description link to one of 30 hosts, http or https, with or
    /// without a user, with a random priority.
    static func link(_ random: inout SplitMix64) -> String {
        let scheme = random.next() % 2 == 0 ? "https" : "http"
        let user = random.next() % 8 == 0 ? "u:p@" : ""
        let relation = random.next() % 5 == 0 ? #"describedby; type="application/metalink4+xml""# : "duplicate"
        return "<\(scheme)://\(user)m\(random.next() % 30).example/f>; rel=\(relation); pri=\(random.next() % 1_000_001), "
    }

    @Test("byte soups: no trap, at most 64 links and 10 mirrors, no http mirror or description under https",
          arguments: ["https://example.com/dir/file.iso", "http://example.com/dir/file.iso", "https://u:p@example.com/dir/file.iso"])
    func soups(_ responseText: String) throws {
        let response = try HTTPURL.parse(responseText)
        var random = SplitMix64(seed: 0x11E4_8288)
        var mirrorsSeen = 0, fullPicks = 0
        for _ in 0..<1_500 {
            let fields = Self.soup(&random)
            let header = LinkHeader(fieldValues: fields, base: response)
            #expect(header.links.count + header.skipped.count <= LinkHeader.maximumLinkCount)
            let links = DuplicateLinks(header, responseURL: response)
            check(links, response: response, fields: fields)
            mirrorsSeen += links.mirrors.count
            if links.mirrors.count == DuplicateLinks.maximumMirrorCount { fullPicks += 1 }
        }
        #expect(mirrorsSeen > 1_000 && fullPicks > 10, "the soup should hold usable mirrors, often more than the cap")
    }

    /// The properties every pick keeps.
    private func check(_ links: DuplicateLinks, response: HTTPURL, fields: [String]) {
        #expect(links.mirrors.count <= DuplicateLinks.maximumMirrorCount, "\(fields)")
        #expect(Set(links.mirrors.map(\.url)).count == links.mirrors.count, "\(fields)")
        for url in links.mirrors.map(\.url) + [links.metalink].compactMap({ $0 }) {
            #expect(response.scheme == .http || url.scheme == .https, "\(url) under \(response): \(fields)")
            #expect(url.user == nil && url.password == nil, "\(fields)")
            #expect(url.withoutUserinfo() != response.withoutUserinfo() || url == links.metalink, "\(fields)")
        }
        for mirror in links.mirrors {
            #expect(DuplicateLinks.priorities.contains(mirror.priority))
        }
        for dropped in links.dropped {
            #expect(!dropped.description.utf8.contains { $0 < 0x20 || $0 == 0x7F }, "\(dropped)")
        }
    }
}
