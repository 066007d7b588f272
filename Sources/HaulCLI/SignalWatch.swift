import Dispatch
import HaulCore
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
    private let state: SharedStateLock<State>

    /// The source (until ``stop()``), and how many signals it delivered.
    private struct State: Sendable {
        var source: Source?
        var received = 0
    }

    /// A Dispatch source, whose functions may be called from any thread.
    private struct Source: @unchecked Sendable {   // libdispatch objects are thread-safe; its Swift overlay does not declare them Sendable
        let source: any DispatchSourceSignal
    }

    init(signal signalNumber: Int32, exitsOnRepeat: Bool, handler: @escaping @Sendable () -> Void) {
        self.signalNumber = signalNumber
        _ = signal(signalNumber, SIG_IGN)
        let state = SharedStateLock(State())
        let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
        source.setEventHandler {
            let received = state.withLock { state -> Int in
                state.received += 1
                return state.received
            }
            if received > 1 && exitsOnRepeat {
                _exit(128 + signalNumber)
            }
            handler()
        }
        state.withLock { $0.source = Source(source: source) }
        source.resume()
        self.state = state
    }

    func stop() {
        let source = state.withLock { state in
            defer { state.source = nil }
            return state.source
        }
        guard let source else { return }
        source.source.cancel()
        _ = signal(signalNumber, SIG_DFL)
    }
}
