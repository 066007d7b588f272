/// Start tags, names and namespaces.
extension XMLReader {
    /// A start tag read raw: its name and attributes as ranges of `bytes`.
    struct RawTag {
        var name: Range<Int>
        var attributes: [(name: Range<Int>, value: String)] = []
        var selfClosing = false
    }

    /// A start tag, with its namespace declarations applied and its names resolved.
    mutating func startTag() throws(MetalinkError) -> XMLStartTag {
        let start = index
        guard !rootSeen || !open.isEmpty else { throw failure(.malformed, "a second root element") }
        guard open.count < Metalink.Limits.depth else {
            throw failure(.limitExceeded, "elements nested more than \(Metalink.Limits.depth) deep")
        }
        index += 1
        let raw = try readRawTag()
        var element = OpenElement(name: raw.name, replaced: [])
        for attribute in raw.attributes {
            try declare(attribute, in: &element, at: start)
        }
        open.append(element)
        rootSeen = true
        let name = try resolve(raw.name, isAttribute: false, at: start)
        var attributes: [XMLAttribute] = []
        for attribute in raw.attributes where !isDeclaration(attribute.name) {
            attributes.append(XMLAttribute(name: try resolve(attribute.name, isAttribute: true, at: start), value: attribute.value))
        }
        pendingEnd = raw.selfClosing
        return XMLStartTag(name: name, attributes: attributes)
    }

    /// The name and attributes up to `>` or `/>`.
    mutating func readRawTag() throws(MetalinkError) -> RawTag {
        var tag = RawTag(name: try readName())
        while true {
            let spaced = skipWhitespace()
            guard index < bytes.count else { throw failure(.malformed, "an unterminated start tag <\(redactedName(tag.name))") }
            if bytes[index] == UInt8(ascii: ">") {
                index += 1
                return tag
            }
            if starts(with: "/>") {
                index += 2
                tag.selfClosing = true
                return tag
            }
            guard spaced else { throw failure(.malformed, "no space before an attribute") }
            let attributeStart = index
            let name = try readName()
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "=") else { throw failure(.malformed, "an attribute without '='") }
            index += 1
            skipWhitespace()
            let value = try attributeValue()
            guard tag.attributes.count < Metalink.Limits.attributesPerElement else {
                throw failure(.limitExceeded, "more than \(Metalink.Limits.attributesPerElement) attributes on one element", at: attributeStart)
            }
            guard !tag.attributes.contains(where: { bytes[$0.name].elementsEqual(bytes[name]) }) else {
                throw failure(.malformed, "the attribute \(redactedName(name)) twice on one element", at: attributeStart)
            }
            tag.attributes.append((name, value))
        }
    }

    /// A name (element or attribute, with at most one `:`), as its range in `bytes`.
    mutating func readName() throws(MetalinkError) -> Range<Int> {
        let start = index
        guard index < bytes.count, Self.isNameStart(bytes[index]) else { throw failure(.malformed, "a name was expected") }
        while index < bytes.count, Self.isNameByte(bytes[index]) {
            index += 1
            guard index - start <= Metalink.Limits.nameBytes else {
                throw failure(.limitExceeded, "a name longer than \(Metalink.Limits.nameBytes) bytes", at: start)
            }
        }
        let colons = bytes[start..<index].lazy.filter { $0 == UInt8(ascii: ":") }.count
        guard colons == 0 || (colons == 1 && bytes[index - 1] != UInt8(ascii: ":")) else {
            throw failure(.malformed, "the name \(redactedName(start..<index)) is not a qualified name", at: start)
        }
        return start..<index
    }

    /// Whether `byte` may start a name: an ASCII letter, `_`, or a byte of a non-ASCII scalar.
    static func isNameStart(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "_"), 0x80...: true
        default: false
        }
    }

    /// Whether `byte` may continue a name: a name start, a digit, `-`, `.` or `:`.
    static func isNameByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: ":"): true
        default: isNameStart(byte)
        }
    }

    /// Whether the attribute named at `name` is a namespace declaration (`xmlns`, `xmlns:p`).
    func isDeclaration(_ name: Range<Int>) -> Bool {
        let text = bytes[name]
        return text.elementsEqual("xmlns".utf8) || text.starts(with: "xmlns:".utf8)
    }

    /// Applies `attribute` if it declares a namespace, remembering what it replaced in `element`.
    mutating func declare(_ attribute: (name: Range<Int>, value: String), in element: inout OpenElement,
                          at offset: Int) throws(MetalinkError) {
        guard isDeclaration(attribute.name) else { return }
        let qualified = String(decoding: bytes[attribute.name], as: UTF8.self)
        let prefix = qualified == "xmlns" ? "" : String(qualified.dropFirst("xmlns:".count))
        guard prefix != "xmlns", prefix != "xml" || attribute.value == Self.xmlNamespace,
              attribute.value != Self.xmlNamespace || prefix == "xml" else {
            throw failure(.malformed, "a reserved namespace prefix or URI is declared", at: offset)
        }
        guard prefix.isEmpty || !attribute.value.isEmpty else {
            throw failure(.malformed, "the prefix \(Redaction.safe(prefix)) is declared with an empty URI", at: offset)
        }
        element.replaced.append((prefix, bindings[prefix]))
        bindings[prefix] = attribute.value
    }

    /// The namespace and local name of the qualified name at `range`.
    ///
    /// - Parameter isAttribute: unprefixed attributes are in no namespace (the default
    ///   namespace applies to elements only).
    func resolve(_ range: Range<Int>, isAttribute: Bool, at offset: Int) throws(MetalinkError) -> XMLName {
        let qualified = String(decoding: bytes[range], as: UTF8.self)
        guard let colon = qualified.utf8.firstIndex(of: UInt8(ascii: ":")) else {
            let uri = isAttribute ? nil : bindings[""]
            return XMLName(namespace: uri.flatMap { $0.isEmpty ? nil : $0 }, localName: qualified)
        }
        let prefix = String(qualified[..<colon])
        let local = String(qualified[qualified.utf8.index(after: colon)...])
        if prefix == "xml" { return XMLName(namespace: Self.xmlNamespace, localName: local) }
        guard let uri = bindings[prefix], !uri.isEmpty else {
            throw failure(.malformed, "the prefix \(Redaction.safe(prefix)) is not declared", at: offset)
        }
        return XMLName(namespace: uri, localName: local)
    }
}
