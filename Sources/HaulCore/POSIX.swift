#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CHaulSys

/// The text of the current `errno`.
package func errnoText(_ code: Int32 = errno) -> String {
    String(cString: strerror(code))
}

/// `SOCK_STREAM` as the `Int32` that `socket(2)` and `addrinfo` take (Glibc imports it as an
/// enum case, Darwin as an `Int32`).
package let streamSocketType: Int32 = {
    #if canImport(Glibc)
    Int32(SOCK_STREAM.rawValue)
    #else
    SOCK_STREAM
    #endif
}()

/// `SOCK_CLOEXEC` for `socket(2)`'s type, which Glibc imports as an enum case; 0 on Darwin, which
/// has no such flag (a caller sets `FD_CLOEXEC` with `fcntl` there).
package let SOCK_CLOEXEC_VALUE: Int32 = {
    #if canImport(Glibc)
    Int32(SOCK_CLOEXEC.rawValue)
    #else
    0
    #endif
}()

/// The `send(2)` flag that keeps a write to a closed peer from raising `SIGPIPE`: `MSG_NOSIGNAL`
/// with Glibc; 0 elsewhere, where the socket carries `SO_NOSIGPIPE` instead
/// (``suppressSIGPIPE(onSocket:)``).
package let noSignalSendFlag: Int32 = {
    #if canImport(Glibc)
    Int32(MSG_NOSIGNAL)
    #else
    0
    #endif
}()

/// Sets `SO_NOSIGPIPE` on a socket where the system has it (Darwin), so that a write to a closed
/// peer fails with `EPIPE` instead of raising `SIGPIPE`; nothing with Glibc (see
/// ``noSignalSendFlag``).
package func suppressSIGPIPE(onSocket fd: Int32) {
    #if !canImport(Glibc)
    var one: Int32 = 1
    _ = setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, socklen_t(MemoryLayout<Int32>.size))
    #endif
}

/// Closes a file descriptor (a free function, callable from types that have a `close()` of their own).
package func closeDescriptor(_ fd: Int32) {
    _ = close(fd)
}

/// Makes a child that `posix_spawn` starts with `actions` close every descriptor from `lowest`
/// up (glibc 2.34 and later).
///
/// - Returns: whether the C library can (where it cannot, only descriptors marked close-on-exec
///   are closed).
@discardableResult
package func spawnClosesDescriptors(from lowest: Int32, _ actions: inout posix_spawn_file_actions_t) -> Bool {
    haul_spawn_close_from(&actions, lowest) == 0
}
