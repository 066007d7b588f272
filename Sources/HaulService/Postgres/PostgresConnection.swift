#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One connection to a PostgreSQL server through ``LibPQ``, used by one thread at a time.
///
/// Statements take their values as text parameters (`$1`, `$2`…, never spliced into the SQL)
/// and their results are copied out as text before the call returns.
final class PostgresConnection {
    /// Rows of text (`nil` for NULL), and how many rows a change touched.
    struct Rows {
        var values: [[String?]] = []
        var affected = 0
    }

    /// One `NOTIFY` received.
    struct Notification: Equatable {
        let channel: String
        let payload: String
    }

    private let library: LibPQ
    private var handle: LibPQ.Handle?
    /// The SQLSTATE of the last statement that failed, `nil` when unknown.
    private(set) var lastState: String?
    /// What ``PostgresSettings/redacted`` says of the server, for messages.
    let place: String

    /// Connects.
    ///
    /// - Throws: `store` with libpq's message when the library is missing or the server cannot
    ///   be reached or refuses the login.
    init(_ settings: PostgresSettings) throws(ServiceError) {
        library = try LibPQ.system.get()
        place = settings.redacted
        handle = library.connectdb(settings.effectiveConnectionString)
        guard let handle, library.status(handle) == 0 else {
            let message = Self.trimmed(library.errorMessage(handle))
            library.finish(handle)
            self.handle = nil
            throw ServiceError(.store, "cannot reach the PostgreSQL state at \(place): \(message)")
        }
        try quietNotices()
    }

    /// Keeps the server's notices ("already exists, skipping") off the connection: libpq would
    /// print them on standard error, the daemon's log.
    private func quietNotices() throws(ServiceError) {
        try run("SET client_min_messages TO warning")
    }

    deinit {
        close()
    }

    /// Ends the connection (idempotent); the server lets go of its session locks.
    func close() {
        guard let handle else { return }
        library.finish(handle)
        self.handle = nil
    }

    /// Whether the connection is up (a statement that failed may have lost it).
    var isConnected: Bool {
        handle.map { library.status($0) == 0 } ?? false
    }

    /// Connects again after the connection was lost.
    ///
    /// - Throws: `store` while the server cannot be reached.
    func reconnect() throws(ServiceError) {
        guard let handle else { throw ServiceError(.closed, "the PostgreSQL state is closed") }
        library.reset(handle)
        guard library.status(handle) == 0 else {
            throw ServiceError(.store, "cannot reach the PostgreSQL state at \(place): \(Self.trimmed(library.errorMessage(handle)))")
        }
        try quietNotices()
    }

    /// Runs one statement with text parameters.
    ///
    /// - Throws: `store` with the server's message and SQLSTATE.
    @discardableResult
    func run(_ sql: String, _ parameters: [String?] = []) throws(ServiceError) -> Rows {
        guard let handle else { throw ServiceError(.closed, "the PostgreSQL state is closed") }
        let result = withParameters(parameters) { values in
            library.execParams(handle, sql, Int32(parameters.count), nil, values, nil, nil, 0)
        }
        defer { library.clear(result) }
        switch library.resultStatus(result) {
        case 1: return Rows(affected: Int(Self.trimmed(library.cmdTuples(result))) ?? 0)   // PGRES_COMMAND_OK
        case 2: return Rows(values: copyRows(result), affected: Int(library.ntuples(result)))   // PGRES_TUPLES_OK
        default:
            var message = Self.trimmed(library.resultErrorField(result, 77))   // PG_DIAG_MESSAGE_PRIMARY
            if message.isEmpty { message = Self.trimmed(library.errorMessage(handle)) }   // no result, or the connection lost
            let code = Self.trimmed(library.resultErrorField(result, 67))   // PG_DIAG_SQLSTATE
            lastState = code
            throw ServiceError(.store, "the PostgreSQL state refused \(sql.prefix(40))...: \(message)"
                               + (code.isEmpty ? "" : " (SQLSTATE \(code))"))
        }
    }

    /// The first column of the first row of `sql` (`nil` for no row or NULL).
    func value(_ sql: String, _ parameters: [String?] = []) throws(ServiceError) -> String? {
        try run(sql, parameters).values.first?.first ?? nil
    }

    /// Runs `body` in one transaction: committed when it returns, rolled back when it throws.
    /// A deadlock the server broke or a serialization failure is tried again, up to 5 times: two
    /// nodes changing the same rows in another order (a `pauseAll` beside a node's results) is
    /// ordinary traffic, not an error to answer.
    func transaction<Value>(_ body: () throws(ServiceError) -> Value) throws(ServiceError) -> Value {
        var attempt = 1
        while true {
            do throws(ServiceError) {
                return try transactionOnce(body)
            } catch where attempt < 5 && Self.retriedStates.contains(lastState ?? "") {
                attempt += 1
            }
        }
    }

    /// SQLSTATEs of a transaction to try again: deadlock detected, serialization failure.
    static let retriedStates: Set<String> = ["40P01", "40001"]

    private func transactionOnce<Value>(_ body: () throws(ServiceError) -> Value) throws(ServiceError) -> Value {
        lastState = nil
        try run("BEGIN")
        do throws(ServiceError) {
            let value = try body()
            try run("COMMIT")
            return value
        } catch {
            let state = lastState
            if isConnected { _ = try? run("ROLLBACK") }
            lastState = state
            throw error
        }
    }

    /// The socket to wait on for notifications (-1 when closed).
    var socket: Int32 {
        handle.map { library.socket($0) } ?? -1
    }

    /// Reads what the server sent and returns the notifications among it.
    ///
    /// - Throws: `store` when the connection is lost.
    func notifications() throws(ServiceError) -> [Notification] {
        guard let handle, library.consumeInput(handle) == 1 else {
            throw ServiceError(.store, "lost the PostgreSQL state at \(place): \(Self.trimmed(library.errorMessage(handle)))")
        }
        var received: [Notification] = []
        while let notify = library.notifies(handle) {
            // PGnotify: char *relname; int be_pid; char *extra; …
            let pointer = MemoryLayout<UnsafeRawPointer>.stride
            let channel = notify.load(as: UnsafePointer<CChar>?.self)
            let payload = notify.load(fromByteOffset: 2 * pointer, as: UnsafePointer<CChar>?.self)
            received.append(Notification(channel: channel.map { String(cString: $0) } ?? "",
                                         payload: payload.map { String(cString: $0) } ?? ""))
            library.freemem(notify)
        }
        return received
    }

    private func copyRows(_ result: LibPQ.Handle?) -> [[String?]] {
        let (rows, columns) = (library.ntuples(result), library.nfields(result))
        var values: [[String?]] = []
        values.reserveCapacity(Int(rows))
        for row in 0..<rows {
            values.append((0..<columns).map { column in
                library.getisnull(result, row, column) == 1 ? nil : library.getvalue(result, row, column).map { String(cString: $0) }
            })
        }
        return values
    }

    private func withParameters<Result>(_ parameters: [String?],
                                        _ body: (UnsafePointer<UnsafePointer<CChar>?>?) -> Result) -> Result {
        let copies = parameters.map { $0.map { strdup($0) } ?? nil }
        defer { copies.forEach { free($0) } }
        let pointers = copies.map { $0.map { UnsafePointer($0) } }
        return pointers.withUnsafeBufferPointer { body($0.baseAddress) }
    }

    static func trimmed(_ text: UnsafeMutablePointer<CChar>?) -> String {
        guard let text else { return "" }
        var string = String(cString: text)
        while string.last?.isWhitespace == true { string.removeLast() }
        return string
    }
}
