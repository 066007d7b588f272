/// Why a Metalink document was refused as a whole, and where.
///
/// A problem with one `<file>` never throws: that file is skipped and a line is added to
/// ``Metalink/warnings``. This error is for the document itself: too large, not well-formed XML,
/// a refused construct (a DTD, an undefined entity), a limit passed, a root that is not
/// Metalink 4, or no file left to download.
public struct MetalinkError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The kind of refusal, stable for callers to switch on.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The stable name of the code (for example `"malformed"`).
        public let name: String

        private init(_ name: String) { self.name = name }

        /// The stable name of the code.
        public var description: String { name }

        /// The document is larger than ``Metalink/Limits/documentBytes``.
        public static let tooLarge = Code("tooLarge")
        /// The bytes are not well-formed XML in UTF-8 (a mismatched or unterminated tag,
        /// invalid UTF-8, a malformed reference, text outside the root).
        public static let malformed = Code("malformed")
        /// A construct Haul never reads: a `<!DOCTYPE>` or other markup declaration, or an
        /// entity reference other than the five predefined ones and character references.
        public static let refused = Code("refused")
        /// Nesting, attributes, a name or the text of one element went past ``Metalink/Limits``.
        public static let limitExceeded = Code("limitExceeded")
        /// The root element is not `metalink` in `urn:ietf:params:xml:ns:metalink`.
        public static let notMetalink = Code("notMetalink")
        /// The document is well-formed but no `<file>` in it can be used.
        public static let noUsableFile = Code("noUsableFile")
    }

    /// The kind of refusal.
    public var code: Code
    /// What is wrong, one line, with any text from the document redacted to its safe scalars.
    public var message: String
    /// The byte offset in the document where the problem was found, when it is one place.
    public var offset: Int?

    /// Creates an error.
    ///
    /// - Parameters:
    ///   - code: the kind of refusal.
    ///   - message: one line saying what is wrong.
    ///   - offset: the byte offset of the problem, if it has one.
    public init(_ code: Code, _ message: String, offset: Int? = nil) {
        self.code = code
        self.message = message
        self.offset = offset
    }

    /// `metalink: message at byte N`.
    public var description: String {
        offset.map { "metalink: \(message) at byte \($0)" } ?? "metalink: \(message)"
    }
}
