import CHaulSys
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A descriptor one thread polls and another makes readable (an eventfd on Linux, a pipe elsewhere).
///
/// The descriptor is made on first use of ``pollDescriptor``: most signals of a short download
/// are never polled, and a ``signal()`` before that first use leaves it readable from the start.
/// When the system has no descriptor to give (`EMFILE`, `ENFILE`), ``pollDescriptor`` throws and
/// the next use tries again; ``signal()`` is remembered meanwhile.
package final class WakeupDescriptor: Sendable {
    /// Makes the descriptor pair (read, write; the same one for an eventfd); returns 0, or the
    /// error number.
    package typealias Opener = @Sendable (_ read: inout Int32, _ write: inout Int32) -> Int32
    private struct State {
        var readFD: Int32 = -1
        var writeFD: Int32 = -1
        /// Signalled before the descriptor existed.
        var pending = false
    }
    private let state = SharedStateLock(State())
    private let opener: Opener

    /// - Parameter open: makes the descriptors (tests make it fail; see ``systemOpener``).
    package init(open: @escaping Opener = WakeupDescriptor.systemOpener) {
        self.opener = open
    }

    /// An eventfd on Linux, a non-blocking pipe elsewhere.
    package static let systemOpener: Opener = { read, write in
        haul_wakeup_open(&read, &write) == 0 ? 0 : errno
    }

    deinit {
        state.withLock { state in
            guard state.readFD >= 0 else { return }
            close(state.readFD)
            if state.writeFD != state.readFD { close(state.writeFD) }
        }
    }

    /// The descriptor to include in `poll` (readable once ``signal()`` was called).
    ///
    /// - Throws: ``ResourceError`` (`.descriptor`) when it could not be made.
    package var pollDescriptor: Int32 {
        get throws(ResourceError) {
            try state.withLock { (state) throws(ResourceError) -> Int32 in
                if state.readFD < 0 {
                    var read: Int32 = -1, write: Int32 = -1
                    let code = opener(&read, &write)
                    guard code == 0 else { throw .descriptor(for: "a wake-up descriptor", code) }
                    (state.readFD, state.writeFD) = (read, write)
                    if state.pending { haul_wakeup_signal(state.writeFD) }
                }
                return state.readFD
            }
        }
    }

    /// Makes ``pollDescriptor`` readable (it stays readable until ``drain()``).
    package func signal() {
        state.withLock { state in
            if state.writeFD >= 0 { haul_wakeup_signal(state.writeFD) } else { state.pending = true }
        }
    }

    /// Makes ``pollDescriptor`` unreadable again (consumes every signal so far).
    package func drain() {
        let fd = state.withLock { state -> Int32 in
            state.pending = false
            return state.readFD
        }
        guard fd >= 0 else { return }
        var sink = [UInt8](repeating: 0, count: 64)
        while read(fd, &sink, sink.count) > 0 {}
    }
}
