import HaulMetalink

/// Documents for the tests.
enum Documents {
    /// `count` hex digits (`ab` repeated, then `a` if odd).
    static func hex(_ count: Int, _ pair: String = "ab") -> String {
        String(String(repeating: pair, count: (count + 1) / 2).prefix(count))
    }

    /// A Metalink 4 document with the default namespace, holding `body` inside the root.
    static func document(_ body: String) -> [UInt8] {
        Array("""
        <?xml version="1.0" encoding="UTF-8"?>
        <metalink xmlns="urn:ietf:params:xml:ns:metalink">
        \(body)
        </metalink>
        """.utf8)
    }

    /// A document with one `<file>` named `name` holding `inner` and, unless `url` is `nil`,
    /// one `<url>`.
    static func oneFile(name: String = "a.iso", _ inner: String = "", url: String? = "http://example.com/a.iso") -> [UInt8] {
        let source = url.map { "<url>\($0)</url>" } ?? ""
        return document("<file name=\"\(name)\">\(inner)\(source)</file>")
    }

    /// The error `parse` throws for `bytes`, or `nil` when it returns.
    static func error(_ bytes: [UInt8]) -> MetalinkError? {
        do {
            _ = try Metalink.parse(bytes)
            return nil
        } catch {
            return error
        }
    }
}

/// A small seeded generator (SplitMix64), so a failing property run can be repeated.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var value = state
        value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
        value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
        return value ^ (value >> 31)
    }
}
