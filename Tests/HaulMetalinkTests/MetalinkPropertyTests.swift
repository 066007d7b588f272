import HaulCrypto
import HaulMetalink
import Testing

@Suite("Mutated Metalink documents never crash the parser")
struct MetalinkPropertyTests {
    /// A valid document using most of what the parser reads.
    static let seed = Documents.document("""
    <!-- seed --><file name="dir/a.iso"><size>20</size><identity>A</identity>
    <hash type="sha-256">\(Documents.hex(64))</hash><hash type="md5">\(Documents.hex(32))</hash>
    <pieces length="10" type="sha-1"><hash>\(Documents.hex(40))</hash><hash>\(Documents.hex(40))</hash></pieces>
    <url priority="2" location="de">http://example.com/a?x=1&amp;y=&#50;</url><url priority="1">https://m.example/a</url>
    <metaurl mediatype="torrent">http://example.com/a.torrent</metaurl><x:ext xmlns:x="urn:x">t</x:ext></file>
    <file name='b'><url><![CDATA[http://example.com/b]]></url></file>
    """)

    /// Bytes the mutations insert: XML's own, and some that are not UTF-8.
    static let interesting: [UInt8] = Array("<>/&;#x'\"=:![]-?".utf8) + [0x00, 0x0A, 0x80, 0xC3, 0xFF, 0x30, 0x61]

    /// One random change: a byte replaced, inserted or deleted, a range deleted or repeated, or the end cut.
    static func mutate(_ bytes: inout [UInt8], _ random: inout SeededGenerator) {
        guard !bytes.isEmpty else { return }
        let at = Int.random(in: 0..<bytes.count, using: &random)
        switch Int.random(in: 0..<6, using: &random) {
        case 0: bytes[at] = interesting.randomElement(using: &random)!
        case 1: bytes.insert(interesting.randomElement(using: &random)!, at: at)
        case 2: bytes.remove(at: at)
        case 3: bytes.removeSubrange(at..<min(bytes.count, at + Int.random(in: 1...40, using: &random)))
        case 4: bytes.insert(contentsOf: bytes[at..<min(bytes.count, at + Int.random(in: 1...60, using: &random))], at: at)
        default: bytes.removeSubrange(at...)
        }
    }

    @Test("every mutation parses or throws, and what parses keeps every promise")
    func mutations() {
        var random = SeededGenerator(state: 0x4D45_5441)
        var parsed = 0
        for _ in 0..<3000 {
            var bytes = Self.seed
            for _ in 0..<Int.random(in: 1...4, using: &random) { Self.mutate(&bytes, &random) }
            guard let document = try? Metalink.parse(bytes) else { continue }
            parsed += 1
            check(document, bytes)
        }
        #expect(parsed > 100, "too few mutations parse for the property to mean much: \(parsed)")
    }

    /// The promises of a parsed document.
    func check(_ document: Metalink, _ bytes: [UInt8]) {
        #expect(!document.files.isEmpty)
        #expect(Set(document.files.map(\.name)).count == document.files.count)
        for file in document.files {
            #expect(Metalink.File.nameProblem(file.name) == nil, "\(bytes)")
            #expect(!file.urls.isEmpty && file.urls.allSatisfy { $0.url.utf8.prefix(4).map { $0 | 0x20 }.elementsEqual("http".utf8) })
            #expect(file.hash.map { $0.digest.count == $0.algorithm.byteCount } ?? true)
            if let pieces = file.pieces, let size = file.size {
                #expect(Int64(pieces.digests.count) == (size + pieces.length - 1) / pieces.length)
            }
        }
        #expect(document.warnings.allSatisfy { !$0.unicodeScalars.contains { $0.value < 0x20 } })
    }
}
