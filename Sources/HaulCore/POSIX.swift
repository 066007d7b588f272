#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The text of the current `errno`.
package func errnoText(_ code: Int32 = errno) -> String {
    String(cString: strerror(code))
}

/// Closes a file descriptor (a free function, callable from types that have a `close()` of their own).
package func closeDescriptor(_ fd: Int32) {
    _ = close(fd)
}
