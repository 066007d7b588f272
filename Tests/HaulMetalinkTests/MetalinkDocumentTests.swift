import HaulCrypto
import HaulMetalink
import Testing

@Suite("A Metalink document's files, checked")
struct MetalinkDocumentTests {
    /// RFC 5854 section 1.1's example, whose SHA-256 digest the RFC elides with `...`.
    static func rfcExample(digest: String) -> [UInt8] {
        Array("""
        <?xml version="1.0" encoding="UTF-8"?>
        <metalink xmlns="urn:ietf:params:xml:ns:metalink">
          <published>2009-05-15T12:23:23Z</published>
          <file name="example.ext">
            <size>14471447</size>
            <identity>Example</identity>
            <version>1.0</version>
            <language>en</language>
            <description>
            A description of the example file for download.
            </description>
            <hash type="sha-256">\(digest)</hash>
            <url location="de"
             priority="1">ftp://ftp.example.com/example.ext</url>
            <url location="fr"
             priority="1">http://example.com/example.ext</url>
            <metaurl mediatype="torrent"
             priority="2">http://example.com/example.ext.torrent</metaurl>
          </file>
        </metalink>
        """.utf8)
    }

    @Test("RFC 5854's example (its digest completed): the http source, the hash, the fields; ftp and torrent noted")
    func rfcExample() throws {
        let digest = "f0ad929cd259957e160ea442eb80986b5f01" + Documents.hex(28)
        let document = try Metalink.parse(Self.rfcExample(digest: digest))
        let file = try #require(document.files.first)
        #expect(document.files.count == 1)
        #expect(file.name == "example.ext")
        #expect(file.size == 14_471_447)
        #expect(file.hash?.algorithm == .sha256)
        #expect(file.hash?.digest.first == 0xF0 && file.hash?.digest.count == 32)
        #expect(file.urls == [Metalink.Source(url: "http://example.com/example.ext", priority: 1, location: "fr")])
        #expect(file.description == "A description of the example file for download.")
        #expect(file.version == "1.0" && file.identity == "Example")
        #expect(file.pieces == nil)
        #expect(document.warnings == [
            "file 'example.ext': a URL of scheme 'ftp' skipped: only http and https are used",
            "file 'example.ext': a metaurl (torrent) ignored: only http and https URLs are used",
        ])
    }

    @Test("RFC 5854's example as printed, its digest elided: the file is skipped, and so the document")
    func rfcExampleElided() {
        let error = Documents.error(Self.rfcExample(digest: "f0ad929cd259957e160ea442eb80986b5f01..."))
        #expect(error?.code == .noUsableFile)
        #expect(error?.message == "no usable file: file 'example.ext' skipped: its sha-256 hash is not 64 hex digits")
    }

    /// The draft's example with piece hashes of two types (as aria2's test suite keeps it).
    static func piecesExample(md5: String) -> [UInt8] {
        Documents.document("""
        <file name="example.ext">
          <size>786430</size>
          <hash type="md5">\(md5)</hash>
          <hash type="sha-1">0beec7b5ea3f0fdbc95d0dd47f3c5bc275da8a33</hash>
          <pieces length="262144" type="sha-1">
            <hash>5bd9f7248df0f3a6a86ab6c95f48787d546efa14</hash>
            <hash>9413ee70957a09d55704123687478e07f18c7b29</hash>
            <hash>44213f9f4d59b557314fadcd233232eebcac8012</hash>
          </pieces>
          <pieces length="262144" type="sha-256">
            <hash>0245178074fd042e19b7c3885b360fc21064b30e73f5626c7e3b005d048069c5</hash>
            <hash>487ba2299be7f759d7c7bf6a4ac3a32cee81f1bb9332fc485947e32918864fb2</hash>
            <hash>37290d74ac4d186e3a8e5785d259d2ec04fac91ae28092e7620ec8bc99e830aa</hash>
          </pieces>
          <url location="fr" priority="1">http://example.com/example.ext</url>
          <signature mediatype="application/pgp-signature">a signature</signature>
        </file>
        """)
    }

    @Test("piece hashes: the strongest type is kept, three for 786430 bytes in pieces of 256 KiB")
    func piecesExample() throws {
        let file = try #require(try Metalink.parse(Self.piecesExample(md5: Documents.hex(32))).files.first)
        #expect(file.hash?.algorithm == .sha1)
        let pieces = try #require(file.pieces)
        #expect(pieces.algorithm == .sha256 && pieces.length == 262_144 && pieces.digests.count == 3)
        #expect(pieces.digests.first?.prefix(2) == [0x02, 0x45])
    }

    @Test("an md5 of 31 hex digits (as in aria2's copy of the draft example) skips the file")
    func shortDigest() {
        let error = Documents.error(Self.piecesExample(md5: "cbd18db4cc2f85cedef654fccc4a4d8"))
        #expect(error?.message.contains("its md5 hash is not 32 hex digits") == true)
    }

    @Test("several files are kept in order; a second file of the same name is skipped")
    func severalFiles() throws {
        let document = try Metalink.parse(Documents.document("""
        <file name="a.iso"><url>http://e/a</url></file>
        <file name="dir/b.iso"><size> 12
        </size><url>https://e/b</url></file>
        <file name="a.iso"><url>http://e/other</url></file>
        <file name="c.iso"><url>http://e/c</url></file>
        """))
        #expect(document.files.map(\.name) == ["a.iso", "dir/b.iso", "c.iso"])
        #expect(document.files[0].urls.map(\.url) == ["http://e/a"])
        #expect(document.files[1].size == 12)
        #expect(document.warnings == ["file 'a.iso' skipped: a file of that name comes before it"])
    }

    @Test("sources are sorted by priority, those without one last, ties in document order")
    func prioritySort() throws {
        let file = try #require(try Metalink.parse(Documents.oneFile("""
        <url priority="3">http://e/3</url><url>http://e/none1</url><url priority="1" location="DE">http://e/1a</url>
        <url priority="999999">http://e/max</url><url priority="2">http://e/2</url><url priority="1">http://e/1b</url>
        <url priority="0">http://e/zero</url><url priority="1000000">http://e/big</url><url priority=" 7 ">http://e/7</url>
        <url location="deu">http://e/deu</url>
        """, url: "http://e/none2")).files.first)
        #expect(file.urls.map(\.url) == ["http://e/1a", "http://e/1b", "http://e/2", "http://e/3", "http://e/7", "http://e/max",
                                         "http://e/none1", "http://e/zero", "http://e/big", "http://e/deu", "http://e/none2"])
        #expect(file.urls.first?.location == "de")
        #expect(file.urls.first { $0.url == "http://e/deu" }?.location == nil)
        #expect(file.urls.first { $0.url == "http://e/zero" }?.priority == nil)
    }

    @Test("the strongest hash present is kept; type names are case-insensitive; unknown types are noted")
    func strongestHash() throws {
        let document = try Metalink.parse(Documents.oneFile("""
        <hash type="md5">\(Documents.hex(32))</hash><hash type="SHA-1">\(Documents.hex(40))</hash>
        <hash type="Sha-512">\(Documents.hex(128, "CD"))</hash><hash type="sha-256">\(Documents.hex(64))</hash>
        <hash type="sha3-256">zz</hash><hash type="sha256">\(Documents.hex(64))</hash><hash>00</hash>
        """))
        let file = try #require(document.files.first)
        #expect(file.hash == Metalink.Hash(algorithm: .sha512, digest: [UInt8](repeating: 0xCD, count: 64)))
        #expect(document.warnings.count == 3)
        #expect(document.warnings.first == "file 'a.iso': a hash of the unknown type 'sha3-256' ignored")
    }

    @Test("a hash of the wrong length or with non-hex digits, or two different ones of a type, skip the file", arguments: [
        "<hash type=\"sha-256\">\(Documents.hex(62))</hash>",
        "<hash type=\"sha-256\">\(Documents.hex(66))</hash>",
        "<hash type=\"sha-1\">\(Documents.hex(38))zz</hash>",
        "<hash type=\"md5\">\(Documents.hex(32))</hash><hash type=\"md5\">\(Documents.hex(32, "cd"))</hash>",
    ])
    func badHash(_ inner: String) {
        #expect(Documents.error(Documents.oneFile(inner))?.code == .noUsableFile)
    }

    @Test("sizes: whitespace trimmed; negative, signed, overflowing, non-decimal or repeated sizes skip the file", arguments: [
        ("<size>\n 42 \t</size>", true), ("<size>0</size>", true), ("<size>9223372036854775807</size>", true),
        ("<size>-1</size>", false), ("<size>+5</size>", false), ("<size>9223372036854775808</size>", false),
        ("<size>1e3</size>", false), ("<size></size>", false), ("<size>1</size><size>1</size>", false), ("<size>0x10</size>", false),
    ])
    func sizes(_ inner: String, accepted: Bool) {
        #expect((Documents.error(Documents.oneFile(inner)) == nil) == accepted)
    }

    @Test("piece hashes whose count does not match the size, or a length not above 0, skip the file", arguments: [
        "<size>786430</size><pieces length=\"262144\" type=\"sha-1\"><hash>\(Documents.hex(40))</hash><hash>\(Documents.hex(40))</hash></pieces>",
        "<size>524288</size><pieces length=\"262144\" type=\"sha-1\">" + String(repeating: "<hash>\(Documents.hex(40))</hash>", count: 3) + "</pieces>",
        "<size>0</size><pieces length=\"262144\" type=\"sha-1\"><hash>\(Documents.hex(40))</hash></pieces>",
        "<size>10</size><pieces length=\"0\" type=\"sha-1\"></pieces>",
        "<size>10</size><pieces length=\"-4\" type=\"sha-1\"><hash>\(Documents.hex(40))</hash></pieces>",
        "<pieces type=\"sha-1\"><hash>\(Documents.hex(40))</hash></pieces>",
        "<pieces length=\"10\" type=\"sha-1\"><hash>\(Documents.hex(39))</hash></pieces>",
    ])
    func pieceMismatch(_ inner: String) {
        #expect(Documents.error(Documents.oneFile(inner))?.code == .noUsableFile)
    }

    @Test("piece hashes of an unknown type are ignored; without a size, any count up to the limit is kept")
    func piecesWithoutSize() throws {
        let document = try Metalink.parse(Documents.oneFile("""
        <pieces length="10" type="tiger"><hash>x</hash></pieces>
        <pieces length="10" type="md5"><hash>\(Documents.hex(32))</hash><hash>\(Documents.hex(32))</hash></pieces>
        """))
        #expect(document.files.first?.pieces?.digests.count == 2)
        #expect(document.files.first?.pieces?.algorithm == .md5)
        #expect(document.warnings == ["file 'a.iso': piece hashes of the unknown type 'tiger' ignored"])
    }

    @Test("a size and length that make millions of pieces are refused at once, before any hash is read")
    func millionsImplied() {
        let started = ContinuousClock.now
        let error = Documents.error(Documents.oneFile("<size>1000000000000000</size><pieces length=\"1\" type=\"sha-1\"><hash>\(Documents.hex(40))</hash></pieces>"))
        #expect(error?.message.contains("make 1000000000000000 pieces") == true)
        #expect(ContinuousClock.now - started < .seconds(1))
    }

    @Test("more piece hashes than the limit are refused, and no more are kept than the limit")
    func tooManyPieces() {
        let hash = "<hash>\(Documents.hex(32))</hash>"
        let count = Metalink.Limits.pieceCount + 1
        let started = ContinuousClock.now
        let error = Documents.error(Documents.oneFile("<pieces length=\"1\" type=\"md5\">" + String(repeating: hash, count: count) + "</pieces>"))
        #expect(error?.message.contains("more than \(Metalink.Limits.pieceCount) piece hashes") == true)
        #expect(ContinuousClock.now - started < .seconds(30))
    }

    @Test("only http and https sources are kept; the others are noted; a file without one is skipped")
    func schemes() throws {
        let document = try Metalink.parse(Documents.document("""
        <file name="a.iso"><url>ftp://e/a</url><url>file:///etc/passwd</url><url>javascript:alert(1)</url>
        <url>HTTPS://E/a</url><url>http:/nohost</url><url>http://</url><url>http://e/a b</url><url>nothing</url>
        <url>http://e/a&#x85;</url><url>  http://e/trimmed  </url></file>
        <file name="b.iso"><url>ftp://e/b</url></file>
        """))
        #expect(document.files.map(\.name) == ["a.iso"])
        #expect(document.files.first?.urls.map(\.url) == ["HTTPS://E/a", "http://e/trimmed"])
        #expect(document.warnings.contains("file 'a.iso': a URL of scheme 'file' skipped: only http and https are used"))
        #expect(document.warnings.contains("file 'a.iso': a URL without a scheme skipped: only http and https are used"))
        #expect(document.warnings.contains("file 'b.iso' skipped: it has no http or https URL"))
        #expect(document.warnings.count == 10)
    }

    @Test("metaurls of every mediatype are ignored with a warning")
    func metaurls() throws {
        let document = try Metalink.parse(Documents.oneFile("""
        <metaurl mediatype="torrent">http://e/a.torrent</metaurl><metaurl mediatype="application/x-foo">http://e/x</metaurl><metaurl>http://e/y</metaurl>
        """))
        #expect(document.files.first?.urls.count == 1)
        #expect(document.warnings == [
            "file 'a.iso': a metaurl (torrent) ignored: only http and https URLs are used",
            "file 'a.iso': a metaurl (application/x-foo) ignored: only http and https URLs are used",
            "file 'a.iso': a metaurl (no mediatype) ignored: only http and https URLs are used",
        ])
    }

    @Test("a document with no file, or none usable, is refused")
    func noFile() {
        #expect(Documents.error(Documents.document("<generator>x</generator>"))?.message == "no usable file: the document lists no <file>")
        #expect(Documents.error(Documents.document("<file><url>http://e/a</url></file>"))?.message == "no usable file: a <file> skipped: it has no name")
    }

    @Test("warnings stop at the limit, with a line counting the rest")
    func warningsBounded() throws {
        let bad = (0..<100).map { "<file name=\"../\($0)\"><url>http://e/\($0)</url></file>" }.joined()
        let document = try Metalink.parse(Documents.document(bad + "<file name=\"ok\"><url>http://e/ok</url></file>"))
        #expect(document.warnings.count == Metalink.Limits.warnings + 1)
        #expect(document.warnings.last == "\(100 - Metalink.Limits.warnings) more warnings not shown")
    }

    @Test("sources beyond the limit per file are skipped; notes of one file are bounded too")
    func sourcesBounded() throws {
        let urls = (0...Metalink.Limits.sourcesPerFile).map { "<url>http://e/\($0)</url><metaurl>x</metaurl>" }.joined()
        let document = try Metalink.parse(Documents.oneFile(urls, url: nil))
        #expect(document.files.first?.urls.count == Metalink.Limits.sourcesPerFile)
        #expect(document.warnings.count == Metalink.Limits.warnings + 1)
        #expect(document.warnings.last == "\(Metalink.Limits.sourcesPerFile + 2 - Metalink.Limits.warnings) more warnings not shown")
    }

    @Test("more files than the limit refuse the document")
    func filesBounded() {
        let files = String(repeating: "<file name=\"a\"><url>http://e/a</url></file>", count: Metalink.Limits.files + 1)
        #expect(Documents.error(Documents.document(files))?.code == .limitExceeded)
    }
}
