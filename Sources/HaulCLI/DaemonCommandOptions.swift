#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import HaulService

/// What `haul daemon` was asked to do.
public struct DaemonOptions: Sendable, Equatable {
    /// `--dir=DIR`: the download root.
    public var directory: String?
    /// `--listen=HOST:PORT`.
    public var listen = "127.0.0.1:6800"
    /// Whether `--listen` was given.
    public var listenGiven = false
    /// `--secret=S` (`""` turns authentication off).
    public var secret: String?
    /// `--secret-file=F`.
    public var secretFile: String?
    /// `--state=FILE` or `--state=postgresql://…`.
    public var stateFile: String?
    /// `--node=NAME` (a fleet's node, with the state in PostgreSQL).
    public var node: String?
    /// `--allow-origin=ORIGIN`, repeatable.
    public var allowedOrigins: [String] = []
    /// `-j N`.
    public var maxDownloads = 4
    /// `-x N`.
    public var connections = 4
    /// `--limit-rate=RATE`.
    public var rateLimit: Int64?
    /// `--limit-schedule=SCHEDULE` (empty: none).
    public var limitSchedule = LimitSchedule()
    /// `--json`: events as JSON lines on standard output.
    public var json = false
    /// `--on-complete=PROGRAM`: run for each download that completes.
    public var onComplete: String?
    /// `--on-error=PROGRAM`: run for each download that fails.
    public var onError: String?
    /// The config file the options were read from, if any (`--conf-path`, or the default one).
    public var configFile: String?

    /// The defaults.
    public init() {}
}

/// What a client command (`haul add`, `ls`, `pause`, `resume`, `rm`) was asked to do.
public struct ClientOptions: Sendable, Equatable {
    /// The command.
    public enum Action: String, Sendable, Equatable, CaseIterable {
        /// Add URLs.
        case add
        /// List the downloads.
        case list = "ls"
        /// Pause downloads.
        case pause
        /// Resume paused downloads.
        case resume
        /// Remove downloads (and forget results).
        case remove = "rm"
    }

    /// The command.
    public var action: Action
    /// URLs (`add`) or identifiers (the others).
    public var operands: [String] = []
    /// `--rpc=URL`.
    public var rpc = "http://127.0.0.1:6800/jsonrpc"
    /// `--secret-file=F`; `nil`: the daemon's default file.
    public var secretFile: String?
    /// `-d, --dir=DIR` (add): a folder inside the daemon's root.
    public var directory: String?
    /// `-o, --output=NAME` (add, one URL): the file name.
    public var output: String?

    /// Options for `action`.
    public init(action: Action) {
        self.action = action
    }
}
