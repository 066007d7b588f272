#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The system refused a thread, a descriptor or memory: the operation that asked fails with
/// this error instead of stopping the process (each layer gives it its own code).
package struct ResourceError: Error, Sendable, CustomStringConvertible {
    /// What could not be had.
    package enum Resource: Sendable, Equatable {
        case thread, descriptor, memory
    }

    /// What could not be had.
    package var resource: Resource
    /// One readable sentence: "cannot start a thread: Resource temporarily unavailable".
    package var message: String

    /// An error for `resource` with one readable sentence.
    package init(_ resource: Resource, _ message: String) {
        self.resource = resource
        self.message = message
    }

    /// A thread did not start (`pthread_create` returned `code`).
    package static func thread(_ code: Int32) -> ResourceError {
        ResourceError(.thread, "cannot start a thread: \(errnoText(code))")
    }

    /// A descriptor for `purpose` could not be made (`errno` was `code`).
    package static func descriptor(for purpose: String, _ code: Int32) -> ResourceError {
        ResourceError(.descriptor, "cannot create \(purpose): \(errnoText(code))")
    }

    /// `byteCount` bytes could not be allocated.
    package static func memory(byteCount: Int) -> ResourceError {
        ResourceError(.memory, "cannot allocate \(byteCount) bytes of memory")
    }

    /// The message.
    package var description: String { message }
}
