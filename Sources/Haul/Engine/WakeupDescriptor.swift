import CHaulSys
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A descriptor one thread polls and another makes readable (an eventfd on Linux, a pipe elsewhere).
final class WakeupDescriptor: Sendable {
    /// The descriptor to include in `poll` (readable once ``signal()`` was called).
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

    /// Makes ``pollDescriptor`` readable (it stays readable until ``drain()``).
    func signal() {
        haul_wakeup_signal(signalDescriptor)
    }

    /// Makes ``pollDescriptor`` unreadable again (consumes every signal so far).
    func drain() {
        var sink = [UInt8](repeating: 0, count: 64)
        while read(pollDescriptor, &sink, sink.count) > 0 {}
    }
}
