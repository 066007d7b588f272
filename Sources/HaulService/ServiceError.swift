/// What a ``DownloadService`` throws: a stable code and one readable sentence.
///
/// Messages never carry a secret; they may name an identifier, a path inside the download root
/// or an option the caller gave.
public struct ServiceError: Error, Sendable, CustomStringConvertible {
    /// A stable identifier for a kind of failure; new codes may be added.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The stable name of the code (for example `"notFound"`).
        public let name: String

        private init(_ name: String) {
            self.name = name
        }

        /// The stable name.
        public var description: String { name }

        /// No download has this identifier.
        public static let notFound = Code("notFound")
        /// The download is not in a state the operation applies to (pausing a finished one...).
        public static let invalidState = Code("invalidState")
        /// An argument or option has a value the service refuses.
        public static let invalidArgument = Code("invalidArgument")
        /// A folder or file name would leave the download root (`..`, an absolute path outside
        /// it, a symbolic link).
        public static let unsafePath = Code("unsafePath")
        /// The identifier asked for is taken.
        public static let idInUse = Code("idInUse")
        /// The state file could not be opened, read or written.
        public static let store = Code("store")
        /// The service was shut down.
        public static let closed = Code("closed")
    }

    /// What kind of failure this is.
    public var code: Code
    /// One readable sentence.
    public var message: String

    /// Creates an error.
    ///
    /// - Parameters:
    ///   - code: the stable code.
    ///   - message: one readable sentence.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// `code: message`.
    public var description: String { "\(code.name): \(message)" }
}
