import CSQLite
import HaulCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One connection to an SQLite database file, through the system `libsqlite3`.
///
/// Used by one thread at a time (the store's owner while it loads, then its writer thread);
/// SQLite's own mutex guards it besides (`SQLITE_OPEN_FULLMUTEX`).
final class SQLiteDatabase {
    private var handle: OpaquePointer?

    /// Opens (and creates, mode 0600) the database file at `path`.
    ///
    /// - Throws: `store` when the file cannot be created or opened as a database.
    init(path: String) throws(ServiceError) {
        // SQLite creates files 0644 less the umask; the list may hold URLs with credentials, so
        // the file is created here first, private. Its -wal and -shm files take its mode.
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else {
            throw ServiceError(.store, "cannot open the state file \(path): \(String(cString: strerror(errno)))")
        }
        closeDescriptor(fd)
        var opened: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX | SQLITE_OPEN_NOFOLLOW
        let status = sqlite3_open_v2(path, &opened, flags, nil)
        guard status == SQLITE_OK, let opened else {
            let message = opened.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            sqlite3_close(opened)
            throw ServiceError(.store, "cannot open the state file \(path): \(message)")
        }
        handle = opened
        sqlite3_extended_result_codes(opened, 1)
        sqlite3_busy_timeout(opened, 1000)
    }

    deinit {
        close()
    }

    /// Closes the connection (idempotent). Statements still alive keep it open until they are
    /// finalized (`sqlite3_close_v2`), so its locks go with the last of them.
    func close() {
        guard let handle else { return }
        sqlite3_close_v2(handle)
        self.handle = nil
    }

    /// Whether the last call failed because another connection holds the file's lock.
    var lastErrorWasBusy: Bool {
        guard let handle else { return false }
        return sqlite3_errcode(handle) & 0xFF == SQLITE_BUSY
    }

    /// Runs one or more statements that return no rows.
    ///
    /// - Throws: `store` with SQLite's message.
    func execute(_ sql: String) throws(ServiceError) {
        var message: UnsafeMutablePointer<CChar>?
        let status = sqlite3_exec(handle, sql, nil, nil, &message)
        guard status == SQLITE_OK else {
            let text = message.map { String(cString: $0) } ?? "error \(status)"
            sqlite3_free(message)
            throw ServiceError(.store, "the state file refused \(sql.prefix(40))...: \(text)")
        }
    }

    /// Compiles a statement.
    ///
    /// - Throws: `store` with SQLite's message.
    func prepare(_ sql: String) throws(ServiceError) -> SQLiteStatement {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(handle, sql, -1, &statement, nil) == SQLITE_OK, let statement else {
            throw error("cannot prepare \(sql.prefix(40))...")
        }
        return SQLiteStatement(statement, database: self)
    }

    /// The first column of the first row of `sql`, as an integer (0 when there is no row).
    func integer(_ sql: String) throws(ServiceError) -> Int64 {
        let statement = try prepare(sql)
        return try statement.step() ? (statement.int64(0) ?? 0) : 0
    }

    /// A `store` error with the connection's last message.
    func error(_ what: String) -> ServiceError {
        let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "closed"
        return ServiceError(.store, "\(what): \(message)")
    }
}

/// A compiled statement of an ``SQLiteDatabase``; finalized when released.
final class SQLiteStatement {
    private let statement: OpaquePointer
    private let database: SQLiteDatabase
    private var finalized = false

    fileprivate init(_ statement: OpaquePointer, database: SQLiteDatabase) {
        self.statement = statement
        self.database = database
    }

    deinit {
        finalize()
    }

    /// Frees the statement (idempotent); it cannot run again. The database closes only once
    /// its statements are finalized.
    func finalize() {
        guard !finalized else { return }
        finalized = true
        sqlite3_finalize(statement)
    }

    /// Binds parameter `index` (1-based): an integer, a real, a text, or `nil` for NULL.
    func bind(_ index: Int32, _ value: Int64?) {
        if let value { sqlite3_bind_int64(statement, index, value) } else { sqlite3_bind_null(statement, index) }
    }

    /// Binds a real.
    func bind(_ index: Int32, _ value: Double) {
        sqlite3_bind_double(statement, index, value)
    }

    /// Binds a text (copied by SQLite), or NULL.
    func bind(_ index: Int32, _ value: String?) {
        guard let value else {
            sqlite3_bind_null(statement, index)
            return
        }
        sqlite3_bind_text(statement, index, value, -1, haul_sqlite_transient())
    }

    /// Runs the statement one step: `true` when a row is ready, `false` when done.
    ///
    /// - Throws: `store` with SQLite's message.
    func step() throws(ServiceError) -> Bool {
        switch sqlite3_step(statement) {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default: throw database.error("a statement failed")
        }
    }

    /// Makes the statement ready to run again, with its bindings cleared.
    func reset() {
        sqlite3_reset(statement)
        sqlite3_clear_bindings(statement)
    }

    /// Column `index` (0-based) of the current row as an integer; `nil` for NULL.
    func int64(_ index: Int32) -> Int64? {
        sqlite3_column_type(statement, index) == SQLITE_NULL ? nil : sqlite3_column_int64(statement, index)
    }

    /// Column `index` as a real.
    func double(_ index: Int32) -> Double {
        sqlite3_column_double(statement, index)
    }

    /// Column `index` as text; `nil` for NULL.
    func text(_ index: Int32) -> String? {
        guard let bytes = sqlite3_column_text(statement, index) else { return nil }
        return String(cString: bytes)
    }
}
