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
package final class WakeupDescriptor: Sendable {
    private struct State {
        var readFD: Int32 = -1
        var writeFD: Int32 = -1
        /// Signalled before the descriptor existed.
        var pending = false
    }
    private let state = SharedStateLock(State())

    package init() {}

    deinit {
        state.withLock { state in
            guard state.readFD >= 0 else { return }
            close(state.readFD)
            if state.writeFD != state.readFD { close(state.writeFD) }
        }
    }

    /// The descriptor to include in `poll` (readable once ``signal()`` was called).
    package var pollDescriptor: Int32 {
        state.withLock { state in
            if state.readFD < 0 {
                precondition(haul_wakeup_open(&state.readFD, &state.writeFD) == 0, "cannot create a wake-up descriptor")
                if state.pending { haul_wakeup_signal(state.writeFD) }
            }
            return state.readFD
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
