#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A failure of the test server: it could not listen, load its TLS identity or write.
///
/// The server is a test fixture, so one message is all callers need.
public struct HaulServerError: Error, Sendable, CustomStringConvertible {
    /// What went wrong, in words.
    public var message: String

    /// Creates an error with `message`.
    public init(_ message: String) {
        self.message = message
    }

    /// Creates an error for a failed system call, appending `strerror(errno)`.
    init(_ call: String, errno code: Int32) {
        self.message = "\(call): \(String(cString: strerror(code)))"
    }

    /// The message.
    public var description: String { message }
}
