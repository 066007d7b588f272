import HaulCrypto
import HaulMetalink

/// The Metalink 4 parser: whatever the bytes, it returns or throws, and what it returns holds
/// the promises the engine relies on.
enum MetalinkTargets {
    /// A document: every file kept has a name that passes the name check and is unique, at
    /// least one http(s) source sorted by priority, digests of their algorithm's length, and as
    /// many piece hashes as its size needs; every warning is one line.
    static func metalink(_ data: UnsafeRawBufferPointer) {
        guard let document = try? Metalink.parse(data) else { return }
        FuzzTargets.require(!document.files.isEmpty, "a document without a file")
        var names: Set<String> = []
        for file in document.files {
            FuzzTargets.require(Metalink.File.nameProblem(file.name) == nil, "a refused name kept: \(Array(file.name.unicodeScalars))")
            FuzzTargets.require(staysBelow(file.name), "a name that leaves its folder: \(Array(file.name.unicodeScalars))")
            FuzzTargets.require(names.insert(file.name).inserted, "a name kept twice: \(Array(file.name.unicodeScalars))")
            checkSources(file)
            checkDigests(file)
        }
        for line in document.warnings {
            FuzzTargets.require(!line.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) },
                                "a warning with a control character: \(Array(line.unicodeScalars))")
        }
    }

    /// Whether `name`, read by bytes as the kernel reads a path, stays below the folder it is
    /// joined to: not absolute, no `.` or `..` or empty component, no backslash, no control byte
    /// (a check apart from ``Metalink/File/nameProblem(_:)``, so a fault there shows here).
    static func staysBelow(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard !bytes.isEmpty, bytes.first != UInt8(ascii: "/"), !bytes.contains(UInt8(ascii: "\\")),
              !bytes.contains(where: { $0 < 0x20 || $0 == 0x7F }) else { return false }
        return bytes.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false).allSatisfy {
            !$0.isEmpty && !$0.elementsEqual([UInt8(ascii: ".")]) && !$0.elementsEqual([UInt8(ascii: "."), UInt8(ascii: ".")])
        }
    }

    /// Sources: not empty, http or https (by bytes), sorted by priority (absent last).
    static func checkSources(_ file: Metalink.File) {
        FuzzTargets.require(!file.urls.isEmpty, "a file without a source")
        for source in file.urls {
            // By bytes: "http://\u{359}host" starts with "http://" though its Characters do not.
            let lowered = source.url.utf8.prefix(8).map { $0 | ($0 >= 0x41 && $0 <= 0x5A ? 0x20 : 0) }
            FuzzTargets.require(lowered.starts(with: "http://".utf8) || lowered.starts(with: "https://".utf8),
                                "a source that is not http(s): \(Array(source.url.unicodeScalars.prefix(10)))")
            FuzzTargets.require(source.priority.map { (1...999_999).contains($0) } ?? true, "a priority out of range")
        }
        let order = file.urls.map { $0.priority ?? Int.max }
        FuzzTargets.require(order == order.sorted(), "sources not sorted by priority: \(order)")
    }

    /// The whole-file digest's and the pieces' lengths, and the piece count against the size.
    static func checkDigests(_ file: Metalink.File) {
        if let hash = file.hash {
            FuzzTargets.require(hash.digest.count == hash.algorithm.byteCount, "a digest of the wrong length")
        }
        guard let pieces = file.pieces else { return }
        FuzzTargets.require(pieces.length > 0, "a piece length of \(pieces.length)")
        FuzzTargets.require(pieces.digests.count <= Metalink.Limits.pieceCount, "more piece hashes than the limit")
        FuzzTargets.require(pieces.digests.allSatisfy { $0.count == pieces.algorithm.byteCount }, "a piece digest of the wrong length")
        if let size = file.size {
            let expected = size / pieces.length + (size % pieces.length == 0 ? 0 : 1)
            FuzzTargets.require(Int64(pieces.digests.count) == expected,
                                "\(pieces.digests.count) piece hashes for \(size) bytes in pieces of \(pieces.length)")
        }
    }
}
