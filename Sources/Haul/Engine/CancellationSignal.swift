import CHaulSys
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A flag that wakes threads blocked in `poll`.
///
/// Connections poll the signal's file descriptor beside their socket, so ``cancel()`` ends a
/// blocked read or connect at once, without busy-polling.
final class CancellationSignal: Sendable {
    private let flag = Atomic<Bool>(false)
    /// The descriptor to include in `poll` (readable once cancelled).
    let pollDescriptor: Int32
    private let signalDescriptor: Int32

    init() {
        var readFD: Int32 = -1, writeFD: Int32 = -1
        precondition(haul_wakeup_open(&readFD, &writeFD) == 0, "cannot create a wake-up descriptor")
        pollDescriptor = readFD
        signalDescriptor = writeFD
    }

    deinit {
        close(pollDescriptor)
        if signalDescriptor != pollDescriptor { close(signalDescriptor) }
    }

    /// Whether ``cancel()`` was called.
    var isCancelled: Bool { flag.load(ordering: .acquiring) }

    /// Sets the flag and wakes every poller. Idempotent.
    func cancel() {
        if flag.exchange(true, ordering: .acquiringAndReleasing) == false {
            haul_wakeup_signal(signalDescriptor)
        }
    }
}
