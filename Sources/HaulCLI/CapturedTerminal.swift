#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import HaulCore

/// A ``Terminal`` that records what the command writes, for tests and embedding.
///
/// Its width, interactivity, standard input and working directory are whatever the creator
/// says; ``interrupt()`` simulates Ctrl-C.
public final class CapturedTerminal: Terminal {
    private struct State {
        var output = ""
        var error = ""
        var interruptHandlers: [Int: @Sendable () -> Void] = [:]
        var nextWatch = 0
    }
    private let state = SharedStateLock(State())

    /// Whether progress is drawn as on a TTY.
    public let isInteractive: Bool
    /// The width progress lines must fit in.
    public let width: Int
    /// The directory relative paths are resolved against.
    public let currentDirectory: URL
    private let standardInput: String

    /// Creates a captured terminal.
    ///
    /// - Parameters:
    ///   - isInteractive: draw progress as on a TTY (escape codes) or as plain lines.
    ///   - width: the terminal width in columns.
    ///   - currentDirectory: the working directory (default: the process's).
    ///   - standardInput: what `-i -` reads.
    public init(isInteractive: Bool = false, width: Int = 80, currentDirectory: URL? = nil, standardInput: String = "") {
        self.isInteractive = isInteractive
        self.width = width
        self.currentDirectory = currentDirectory
            ?? URL(fileURLWithPath: FileManager.default.currentDirectoryPath, isDirectory: true)
        self.standardInput = standardInput
    }

    /// Everything written to standard output so far.
    public var standardOutput: String { state.withLock { $0.output } }
    /// Everything written to standard error so far.
    public var standardError: String { state.withLock { $0.error } }

    /// Appends `text` to the captured stream.
    public func write(_ text: String, to stream: StandardStream) {
        state.withLock { state in
            switch stream {
            case .output: state.output += text
            case .error: state.error += text
            }
        }
    }

    /// Returns the standard input given at creation.
    public func readStandardInput() -> String { standardInput }

    /// Records the handler; ``interrupt()`` calls it.
    public func watchInterrupts(_ handler: @escaping @Sendable () -> Void) -> any InterruptWatch {
        let id = state.withLock { state in
            state.nextWatch += 1
            state.interruptHandlers[state.nextWatch] = handler
            return state.nextWatch
        }
        return CapturedWatch { [weak self] in
            _ = self?.state.withLock { $0.interruptHandlers.removeValue(forKey: id) }
        }
    }

    /// Simulates Ctrl-C: calls every active interrupt handler.
    public func interrupt() {
        let handlers = state.withLock { Array($0.interruptHandlers.values) }
        for handler in handlers { handler() }
    }
}

/// Stops a ``CapturedTerminal`` interrupt subscription.
private struct CapturedWatch: InterruptWatch {
    let onStop: @Sendable () -> Void
    func stop() { onStop() }
}
