/// An element or attribute name, resolved against the namespace declarations in scope.
struct XMLName: Equatable, Sendable {
    /// The namespace URI; `nil` for none (an unprefixed attribute, or no default namespace).
    var namespace: String?
    /// The part after the prefix.
    var localName: String
}

/// An attribute of a start tag (namespace declarations are not among them).
struct XMLAttribute: Equatable, Sendable {
    var name: XMLName
    /// The value with its references replaced and its tabs and line ends made spaces.
    var value: String
}

/// A start tag.
struct XMLStartTag: Equatable, Sendable {
    var name: XMLName
    var attributes: [XMLAttribute]

    /// The value of the unprefixed attribute `localName`, if the tag has it.
    func attribute(_ localName: String) -> String? {
        attributes.first { $0.name.namespace == nil && $0.name.localName == localName }?.value
    }
}

/// What the reader found next.
enum XMLEvent: Equatable, Sendable {
    /// A start tag (an empty-element tag `<a/>` gives `.start` then `.end`).
    case start(XMLStartTag)
    /// Character data or a CDATA section inside the root, references replaced; one element's
    /// text may come in several runs.
    case text(String)
    /// The end of the innermost open element.
    case end
}

/// A pull reader of the XML subset a Metalink document needs, over UTF-8 bytes, refusing
/// everything that makes XML dangerous.
///
/// Reads elements, attributes (either quote), character data, CDATA sections and the five
/// predefined entities and character references; skips comments, the XML declaration and other
/// processing instructions. Refuses `<!DOCTYPE>` and every other markup declaration (so no
/// external entity is ever fetched and no entity expands), any other entity reference, invalid
/// UTF-8 and characters XML does not allow. Nesting, attributes, names and text per element are
/// bounded by ``Metalink/Limits``. Every error carries the byte offset where it was found.
struct XMLReader {
    let bytes: [UInt8]
    var index = 0
    /// The open elements, outermost first.
    var open: [OpenElement] = []
    /// Each prefix in scope (`""` for the default namespace) and its URI (`""` for none).
    var bindings: [String: String] = [:]
    /// An empty-element tag was returned as `.start`; its `.end` comes next.
    var pendingEnd = false
    var rootSeen = false

    /// An element whose end tag has not come yet.
    struct OpenElement {
        /// Where its qualified name is in `bytes`, to match the end tag against.
        var name: Range<Int>
        /// The bindings its declarations replaced: each prefix and its earlier URI.
        var replaced: [(prefix: String, uri: String?)]
        /// Bytes of text read directly inside it, whitespace-only runs aside.
        var textBytes = 0
    }

    /// The namespace the `xml` prefix is bound to by definition.
    static let xmlNamespace = "http://www.w3.org/XML/1998/namespace"

    /// Creates a reader over a whole document, checking its encoding first.
    ///
    /// - Throws: `malformed` at the first byte that is not UTF-8 or a character XML allows.
    init(_ bytes: [UInt8]) throws(MetalinkError) {
        self.bytes = bytes
        try UTF8Check.validate(bytes)
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { index = 3 }
    }

    /// An error of `code` at the current offset (or `offset`).
    func failure(_ code: MetalinkError.Code, _ message: String, at offset: Int? = nil) -> MetalinkError {
        MetalinkError(code, message, offset: offset ?? index)
    }

    /// The next event, or `nil` after the root element's end and the trailing misc.
    ///
    /// - Throws: ``MetalinkError`` (`malformed`, `refused`, `limitExceeded`) at the first problem.
    mutating func next() throws(MetalinkError) -> XMLEvent? {
        if pendingEnd {
            pendingEnd = false
            closeElement()
            return .end
        }
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "<") {
                if let event = try markup() { return event }
                continue
            }
            let start = index
            let (text, whitespaceOnly) = try characterData()
            guard !open.isEmpty else {
                guard whitespaceOnly else { throw failure(.malformed, "text outside the root element", at: start) }
                continue
            }
            try countText(text.utf8.count, whitespaceOnly: whitespaceOnly, at: start)
            return .text(text)
        }
        if let innermost = open.last {
            throw failure(.malformed, "the document ends inside <\(redactedName(innermost.name))>")
        }
        guard rootSeen else { throw failure(.malformed, "the document has no root element") }
        return nil
    }

    /// Adds `count` bytes to the innermost element's text, refusing more than the limit.
    mutating func countText(_ count: Int, whitespaceOnly: Bool, at offset: Int) throws(MetalinkError) {
        guard !whitespaceOnly else { return }
        open[open.count - 1].textBytes += count
        guard open[open.count - 1].textBytes <= Metalink.Limits.textBytesPerElement else {
            throw failure(.limitExceeded, "more than \(Metalink.Limits.textBytesPerElement) bytes of text in one element", at: offset)
        }
    }

    /// Reads what starts with `<`: returns an event, or `nil` for a comment or processing
    /// instruction (skipped).
    mutating func markup() throws(MetalinkError) -> XMLEvent? {
        if starts(with: "<?") {
            try skip(past: "?>", from: index + 2, what: "processing instruction")
            return nil
        }
        if starts(with: "<!--") {
            try skip(past: "-->", from: index + 4, what: "comment")
            return nil
        }
        if starts(with: "<![CDATA[") {
            return try cdata()
        }
        if starts(with: "<!") {
            let what = starts(with: "<!DOCTYPE") ? "a document type declaration (<!DOCTYPE)"
                : starts(with: "<!ENTITY") ? "an entity declaration (<!ENTITY)" : "a markup declaration (<!)"
            throw failure(.refused, "\(what) is refused: no DTD or entity is ever read")
        }
        if starts(with: "</") {
            try endTag()
            return .end
        }
        return .start(try startTag())
    }

    /// A CDATA section inside the root, as text.
    mutating func cdata() throws(MetalinkError) -> XMLEvent {
        let start = index
        guard !open.isEmpty else { throw failure(.malformed, "a CDATA section outside the root element") }
        let contentStart = index + 9
        try skip(past: "]]>", from: contentStart, what: "CDATA section")
        let text = Self.normalizedLineEnds(bytes[contentStart..<(index - 3)])
        let whitespaceOnly = text.utf8.allSatisfy(Self.isWhitespace)
        try countText(text.utf8.count, whitespaceOnly: whitespaceOnly, at: start)
        return .text(text)
    }

    /// An end tag, which must close the innermost open element.
    mutating func endTag() throws(MetalinkError) {
        let start = index
        index += 2
        let name = try readName()
        skipWhitespace()
        guard index < bytes.count, bytes[index] == UInt8(ascii: ">") else {
            throw failure(.malformed, "an unterminated end tag </\(redactedName(name))")
        }
        index += 1
        guard let innermost = open.last else {
            throw failure(.malformed, "an end tag </\(redactedName(name))> with no element open", at: start)
        }
        guard bytes[name].elementsEqual(bytes[innermost.name]) else {
            throw failure(.malformed, "</\(redactedName(name))> does not close <\(redactedName(innermost.name))>", at: start)
        }
        closeElement()
    }

    /// Pops the innermost element and restores the bindings its declarations replaced.
    mutating func closeElement() {
        guard let element = open.popLast() else { return }
        for (prefix, uri) in element.replaced.reversed() {
            bindings[prefix] = uri
        }
    }

    /// Whether the bytes at the cursor start with `literal` (ASCII).
    func starts(with literal: StaticString) -> Bool {
        let count = literal.utf8CodeUnitCount
        guard index + count <= bytes.count else { return false }
        return UnsafeBufferPointer(start: literal.utf8Start, count: count).elementsEqual(bytes[index..<(index + count)])
    }

    /// Moves the cursor past the first `terminator` at or after `from`.
    ///
    /// - Throws: `malformed` ("an unterminated ...") when there is none.
    mutating func skip(past terminator: StaticString, from: Int, what: String) throws(MetalinkError) {
        let pattern = UnsafeBufferPointer(start: terminator.utf8Start, count: terminator.utf8CodeUnitCount)
        var position = from
        while position + pattern.count <= bytes.count {
            if bytes[position] == pattern[0], bytes[position..<(position + pattern.count)].elementsEqual(pattern) {
                index = position + pattern.count
                return
            }
            position += 1
        }
        throw failure(.malformed, "an unterminated \(what)")
    }

    /// Moves past spaces, tabs and line ends; returns whether there were any.
    @discardableResult
    mutating func skipWhitespace() -> Bool {
        let start = index
        while index < bytes.count, Self.isWhitespace(bytes[index]) { index += 1 }
        return index > start
    }

    /// Whether `byte` is XML whitespace (space, tab, line feed, carriage return).
    static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }

    /// The name at `range`, redacted for a message.
    func redactedName(_ range: Range<Int>) -> String {
        Redaction.safe(String(decoding: bytes[range], as: UTF8.self))
    }

    /// `text` with each CR LF pair and each lone CR made LF (XML 1.0 section 2.11).
    static func normalizedLineEnds(_ text: ArraySlice<UInt8>) -> String {
        guard text.contains(0x0D) else { return String(decoding: text, as: UTF8.self) }
        var out: [UInt8] = []
        out.reserveCapacity(text.count)
        var previousWasCR = false
        for byte in text {
            if byte == 0x0A, previousWasCR {
                previousWasCR = false
                continue
            }
            previousWasCR = byte == 0x0D
            out.append(previousWasCR ? 0x0A : byte)
        }
        return String(decoding: out, as: UTF8.self)
    }
}
