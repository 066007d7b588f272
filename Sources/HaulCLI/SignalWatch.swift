import Dispatch
import HaulCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Delivers a POSIX signal to a handler.
///
/// The signal is caught from the moment the watch is made (a plain signal handler, installed
/// before `init` returns): a signal sent right after it, as a service manager's stop may be right
/// after the daemon says it listens, is never lost. The handler itself runs later, on a Dispatch
/// queue (see ``SignalRelay``), so it may take locks and allocate.
///
/// With `exitsOnRepeat`, a second signal ends the process at once with `128 + signal`
/// (130 for SIGINT), in case a download does not stop. ``stop()`` removes the handler and, when
/// no other watch has the signal, restores its default action.
final class SignalWatch: InterruptWatch {
    private let signalNumber: Int32
    private let token: Int

    init(signal signalNumber: Int32, exitsOnRepeat: Bool, handler: @escaping @Sendable () -> Void) {
        self.signalNumber = signalNumber
        let received = SharedStateLock(0)
        token = SignalRelay.shared.watch(signalNumber) {
            let count = received.withLock { count -> Int in
                count += 1
                return count
            }
            if count > 1 && exitsOnRepeat { _exit(128 + signalNumber) }
            handler()
        }
    }

    func stop() {
        SignalRelay.shared.unwatch(signalNumber, token: token)
    }
}

/// The one place where caught signals come in: a handler that only writes the signal's number
/// to a pipe (all a signal handler may safely do), and a Dispatch read source on the pipe's other
/// end that calls the watches of that signal.
///
/// Process-wide because signal dispositions are; made on first use.
final class SignalRelay: Sendable {
    static let shared = SignalRelay()

    private struct Watches: Sendable {
        var next = 0
        var handlers: [Int32: [Int: @Sendable () -> Void]] = [:]
    }

    private let watches = SharedStateLock(Watches())
    private let source: ReadSource?

    /// A Dispatch source, whose functions may be called from any thread.
    private struct ReadSource: @unchecked Sendable {   // libdispatch objects are thread-safe; its Swift overlay does not declare them Sendable
        let source: any DispatchSourceRead
    }

    private init() {
        guard signalPipe.read >= 0 else {
            source = nil
            return
        }
        let source = DispatchSource.makeReadSource(fileDescriptor: signalPipe.read, queue: .global())
        self.source = ReadSource(source: source)
        source.setEventHandler { [watches] in
            for number in Self.drain() {
                let handlers = watches.withLock { $0.handlers[number].map { Array($0.values) } ?? [] }
                for handler in handlers { handler() }
            }
        }
        source.resume()
    }

    /// Adds `handler` for `number` and catches the signal from now on. (Without a pipe, when
    /// the process has no descriptor left, the signal keeps its default action: it ends the
    /// process, whose partial files and records are already on disk.)
    ///
    /// - Returns: the token that ``unwatch(_:token:)`` takes.
    func watch(_ number: Int32, _ handler: @escaping @Sendable () -> Void) -> Int {
        let token = watches.withLock { watches -> Int in
            watches.next += 1
            watches.handlers[number, default: [:]][watches.next] = handler
            return watches.next
        }
        if source != nil { _ = signal(number, relaySignal) }
        return token
    }

    /// Removes a watch; the last one of `number` gives the signal its default action back.
    func unwatch(_ number: Int32, token: Int) {
        let last = watches.withLock { watches -> Bool in
            watches.handlers[number]?[token] = nil
            return watches.handlers[number]?.isEmpty ?? true
        }
        if last { _ = signal(number, SIG_DFL) }
    }

    /// The signal numbers waiting in the pipe, in the order they came.
    private static func drain() -> [Int32] {
        var numbers: [Int32] = []
        var buffer = [UInt8](repeating: 0, count: 64)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(signalPipe.read, $0.baseAddress, $0.count) }
            guard count > 0 else { return numbers }
            numbers += buffer.prefix(count).map { Int32($0) }
        }
    }
}

/// The pipe that carries caught signals' numbers, both ends non-blocking and closed on exec
/// (`-1` both when the process has no descriptor left). Made before any signal is caught
/// (``SignalRelay``'s first use), so the handler only reads it.
private let signalPipe: (read: Int32, write: Int32) = {
    var ends: [Int32] = [-1, -1]
    guard pipe(&ends) == 0 else { return (-1, -1) }
    for end in ends {
        _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
        _ = fcntl(end, F_SETFD, FD_CLOEXEC)
    }
    return (ends[0], ends[1])
}()

/// The signal handler: writes the signal's number to the pipe (a full pipe drops it: hundreds
/// of signals are waiting already), keeping `errno` as it was.
private func relaySignal(_ number: Int32) {
    let saved = errno
    var byte = UInt8(truncatingIfNeeded: number)
    _ = write(signalPipe.write, &byte, 1)
    errno = saved
}
