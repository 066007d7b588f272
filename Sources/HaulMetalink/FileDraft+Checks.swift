import HaulCrypto

/// Piece hashes, sources and the check of a whole file.
extension FileDraft {
    /// `<pieces type="..." length="...">` starts: its hashes are kept when the type is known
    /// and the length is a whole number above 0 that does not make too many pieces.
    mutating func startPieces(type: String?, length: String?) {
        openPieces = (nil, 0, [])
        guard let type, let algorithm = Self.algorithm(named: type) else {
            return notes.add("piece hashes of the unknown type '\(Redaction.safe(type ?? "", limit: 40))' ignored")
        }
        let lengthText = Self.trimmed(length ?? "")
        guard lengthText.utf8.allSatisfy(Self.isDigit), let value = Int64(lengthText), value > 0 else {
            return refuse("its piece length '\(Redaction.safe(lengthText, limit: 40))' is not a whole number above 0")
        }
        if let size, let count = Self.pieceCount(size: size, length: value), count > Metalink.Limits.pieceCount {
            return refuse("its size and piece length make \(count) pieces, more than the \(Metalink.Limits.pieceCount) allowed")
        }
        openPieces = (algorithm, value, [])
    }

    /// A piece's `<hash>`: kept while the file is not refused, up to the limit.
    mutating func takePieceHash(_ text: String) {
        guard refusal == nil, let algorithm = openPieces?.algorithm, let count = openPieces?.digests.count else { return }
        guard count < Metalink.Limits.pieceCount else {
            openPieces = nil
            return refuse("it has more than \(Metalink.Limits.pieceCount) piece hashes")
        }
        guard let digest = Self.digest(text, algorithm) else {
            openPieces = nil
            return refuse("its piece hash \(count + 1) is not \(algorithm.byteCount * 2) hex digits")
        }
        openPieces?.digests.append(digest)
    }

    /// `</pieces>`: the piece hashes join the file's when their type is known.
    mutating func endPieces() {
        if refusal == nil, let open = openPieces, let algorithm = open.algorithm {
            pieces.append(Metalink.Pieces(length: open.length, algorithm: algorithm, digests: open.digests))
        }
        openPieces = nil
    }

    /// The number of pieces of `length` bytes a file of `size` bytes has, or `nil` when the
    /// length is not above 0.
    static func pieceCount(size: Int64, length: Int64) -> Int64? {
        guard length > 0 else { return nil }
        return size / length + (size % length == 0 ? 0 : 1)
    }

    /// The file, or why it is skipped: its name, its refusal, its sources, its pieces' count.
    func finished() -> Result<Metalink.File, FileRefusal> {
        guard let name else { return .failure(FileRefusal(reason: "it has no name")) }
        if let problem = Metalink.File.nameProblem(name) { return .failure(FileRefusal(reason: "its name is refused: \(problem)")) }
        if let refusal { return .failure(FileRefusal(reason: refusal)) }
        let urls = sources.enumerated().sorted {
            ($0.element.priority ?? Int.max, $0.offset) < ($1.element.priority ?? Int.max, $1.offset)
        }
        guard !urls.isEmpty else { return .failure(FileRefusal(reason: "it has no http or https URL")) }
        if let size {
            for piece in pieces {
                let expected = Self.pieceCount(size: size, length: piece.length) ?? 0
                guard expected == Int64(piece.digests.count) else {
                    let kind = Self.name(of: piece.algorithm)
                    return .failure(FileRefusal(reason: "it has \(piece.digests.count) \(kind) piece hashes where its size needs \(expected)"))
                }
            }
        }
        let hash = Self.strength.lazy.compactMap { algorithm in
            self.hashes[algorithm].map { Metalink.Hash(algorithm: algorithm, digest: $0) }
        }.first
        let strongestPieces = Self.strength.lazy.compactMap { algorithm in self.pieces.first { $0.algorithm == algorithm } }.first
        return .success(Metalink.File(name: name, size: size, hash: hash, pieces: strongestPieces, urls: urls.map(\.element),
                                      description: description, version: version, identity: identity))
    }

    /// The source of a `<url>`, or `nil` with a note when it is not an `http` or `https` URL
    /// free of spaces and control scalars. An invalid priority or location is dropped with a note.
    static func source(_ url: String, priority: String?, location: String?, notes: inout Warnings) -> Metalink.Source? {
        let scheme = String(String.UnicodeScalarView(url.unicodeScalars.prefix { $0 != ":" }))
        let lowered = asciiLowercased(scheme)
        guard lowered == "http" || lowered == "https" else {
            let schemeless = scheme.unicodeScalars.count == url.unicodeScalars.count || scheme.unicodeScalars.count > 16
            let shown = schemeless ? "a URL without a scheme" : "a URL of scheme '\(Redaction.safe(lowered))'"
            notes.add("\(shown) skipped: only http and https are used")
            return nil
        }
        let rest = url.utf8.dropFirst(scheme.utf8.count)
        guard rest.starts(with: "://".utf8), let host = rest.dropFirst(3).first, host != UInt8(ascii: "/") else {
            notes.add("an \(lowered) URL without a host skipped")
            return nil
        }
        guard url.unicodeScalars.allSatisfy({ $0.value > 0x20 && Redaction.isSafe($0) }) else {
            notes.add("an \(lowered) URL with a space or control character skipped")
            return nil
        }
        let priority = checkedPriority(priority, notes: &notes)
        return Metalink.Source(url: url, priority: priority, location: checkedLocation(location, notes: &notes))
    }

    /// A priority from 1 to 999999, or `nil` (with a note when one was given otherwise).
    static func checkedPriority(_ text: String?, notes: inout Warnings) -> Int? {
        guard let text else { return nil }
        let trimmed = Self.trimmed(text)
        guard trimmed.utf8.count <= 6, trimmed.utf8.allSatisfy(isDigit), let value = Int(trimmed), value >= 1 else {
            notes.add("the priority '\(Redaction.safe(trimmed, limit: 40))' is not 1 to 999999, ignored")
            return nil
        }
        return value
    }

    /// A two-letter country code in lowercase, or `nil` (with a note when one was given otherwise).
    static func checkedLocation(_ text: String?, notes: inout Warnings) -> String? {
        guard let text else { return nil }
        let trimmed = Self.trimmed(text)
        let lowered = asciiLowercased(trimmed)
        guard lowered.utf8.count == 2, lowered.utf8.allSatisfy({ (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) }) else {
            notes.add("the location '\(Redaction.safe(trimmed, limit: 40))' is not a two-letter country code, ignored")
            return nil
        }
        return lowered
    }

    /// `text` with ASCII capitals made small and nothing else changed (no Unicode case mapping:
    /// the Kelvin sign must not become `k`).
    static func asciiLowercased(_ text: String) -> String {
        String(decoding: text.utf8.map { (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) ? $0 | 0x20 : $0 }, as: UTF8.self)
    }
}
