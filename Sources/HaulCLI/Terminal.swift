#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One of the two output streams of the command.
public enum StandardStream: Sendable, Equatable {
    /// Standard output: `--help`, `--version` and `--json` events.
    case output
    /// Standard error: progress, warnings and the one line per failure.
    case error
}

/// Where the command writes its text.
///
/// Production writes to file descriptors 1 and 2; tests capture the text instead.
public protocol OutputSink: Sendable {
    /// Writes `text` to `stream` as is (no newline is added).
    ///
    /// - Parameters:
    ///   - text: the text, usually ending with a newline.
    ///   - stream: standard output or standard error.
    func write(_ text: String, to stream: StandardStream)
}

/// Everything the command needs from its process: output, the terminal, stdin, the working
/// directory and Ctrl-C.
///
/// ``SystemTerminal`` is the real one; ``CapturedTerminal`` records output for tests.
public protocol Terminal: OutputSink {
    /// Whether standard error is an interactive terminal that understands escape codes
    /// (a TTY, and `TERM` is not `dumb`): the progress line is then redrawn in place.
    var isInteractive: Bool { get }
    /// The terminal's width in columns (80 when unknown). Read again for every redraw.
    var width: Int { get }
    /// The directory relative paths are resolved against.
    var currentDirectory: URL { get }
    /// Reads standard input to its end (for `-i -`).
    ///
    /// - Returns: the bytes read, decoded as UTF-8 (invalid sequences repaired).
    func readStandardInput() -> String
    /// Calls `handler` on every Ctrl-C (SIGINT) until the returned watch is stopped.
    ///
    /// - Parameter handler: runs on an arbitrary thread.
    /// - Returns: the watch; call ``InterruptWatch/stop()`` when the command ends.
    func watchInterrupts(_ handler: @escaping @Sendable () -> Void) -> any InterruptWatch
    /// The environment variables (credentials for `s3://` and `oss://` URLs come from here).
    var environment: [String: String] { get }
}

extension Terminal {
    /// The process's environment.
    public var environment: [String: String] { ProcessInfo.processInfo.environment }
}

/// A subscription to Ctrl-C made by ``Terminal/watchInterrupts(_:)``.
public protocol InterruptWatch: Sendable {
    /// Stops calling the handler (and restores the default signal behaviour).
    func stop()
}

/// The process's own terminal: file descriptors 1 and 2, `isatty`, `TIOCGWINSZ`, SIGINT.
public struct SystemTerminal: Terminal {
    /// Creates the process terminal.
    public init() {}

    /// Writes all of `text` to descriptor 1 or 2, retrying short writes and `EINTR`.
    public func write(_ text: String, to stream: StandardStream) {
        let descriptor: Int32 = stream == .output ? 1 : 2
        var bytes = Array(text.utf8)
        var offset = 0
        bytes.withUnsafeMutableBytes { buffer in
            while offset < buffer.count {
                let written = systemWrite(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if written > 0 {
                    offset += written
                } else if written < 0 && errno == EINTR {
                    continue
                } else {
                    return
                }
            }
        }
    }

    /// A TTY on standard error and `TERM` other than `dumb`.
    public var isInteractive: Bool {
        guard isatty(2) == 1 else { return false }
        return ProcessInfo.processInfo.environment["TERM"] != "dumb"
    }

    /// The width from `TIOCGWINSZ` on standard error, else `COLUMNS`, else 80.
    public var width: Int {
        var size = winsize()
        if ioctl(2, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 {
            return Int(size.ws_col)
        }
        if let columns = ProcessInfo.processInfo.environment["COLUMNS"].flatMap({ Int($0) }), columns > 0 {
            return columns
        }
        return 80
    }

    /// The process's working directory.
    public var currentDirectory: URL {
        URL(fileURLWithPath: FileManager.default.currentDirectoryPath, isDirectory: true)
    }

    /// Reads descriptor 0 to its end.
    public func readStandardInput() -> String {
        String(decoding: readAll(from: 0).bytes, as: UTF8.self)
    }

    /// Ignores SIGINT's default action and delivers it through a Dispatch signal source; a
    /// second Ctrl-C ends the process at once with status 130.
    public func watchInterrupts(_ handler: @escaping @Sendable () -> Void) -> any InterruptWatch {
        SignalWatch(signal: SIGINT, exitsOnRepeat: true, handler: handler)
    }
}

/// `write(2)`, named apart from ``SystemTerminal/write(_:to:)``.
private func systemWrite(_ descriptor: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int {
    #if canImport(Glibc)
    Glibc.write(descriptor, bytes, count)
    #elseif canImport(Darwin)
    Darwin.write(descriptor, bytes, count)
    #endif
}

/// Reads `descriptor` to its end, retrying `EINTR`.
///
/// - Returns: the bytes read, and the `errno` of the read that failed (`nil` at a clean end).
func readAll(from descriptor: Int32) -> (bytes: [UInt8], error: Int32?) {
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 64 * 1024)
    while true {
        let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        if count > 0 {
            bytes.append(contentsOf: chunk[0..<count])
        } else if count == 0 {
            return (bytes, nil)
        } else if errno != EINTR {
            return (bytes, errno)
        }
    }
}
