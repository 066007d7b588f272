import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Delivers a POSIX signal to a handler through a Dispatch signal source.
///
/// The signal's default action (ending the process) is ignored while the watch runs, so the
/// command can cancel its download, end the progress line and exit with its own status.
/// ``stop()`` cancels the source and restores the default action.
///
/// With `exitsOnRepeat`, a second signal ends the process at once with `128 + signal`
/// (130 for SIGINT), in case a download does not stop.
///
/// On Linux the source is registered asynchronously: a signal sent within moments of creating
/// the watch may be ignored.
final class SignalWatch: InterruptWatch {
    private let signalNumber: Int32
    private let source: Mutex<(any DispatchSourceSignal)?>

    init(signal signalNumber: Int32, exitsOnRepeat: Bool, handler: @escaping @Sendable () -> Void) {
        self.signalNumber = signalNumber
        _ = signal(signalNumber, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
        let count = Atomic<Int>(0)
        source.setEventHandler {
            if count.add(1, ordering: .relaxed).newValue > 1 && exitsOnRepeat {
                _exit(128 + signalNumber)
            }
            handler()
        }
        source.resume()
        self.source = Mutex(source)
    }

    func stop() {
        let source = self.source.withLock { source in
            defer { source = nil }
            return source
        }
        guard let source else { return }
        source.cancel()
        _ = signal(signalNumber, SIG_DFL)
    }
}
