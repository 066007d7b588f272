#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// PostgreSQL's client library (libpq), found when a service first asks for it, so that Haul
/// builds and runs without it: only a service on PostgreSQL needs it.
///
/// The functions are looked up by name (`dlsym`) and called through C function pointers; the
/// types libpq hands out (`PGconn *`, `PGresult *`) stay opaque.
struct LibPQ: Sendable {
    typealias Handle = OpaquePointer
    typealias Text = UnsafeMutablePointer<CChar>
    let connectdb: @convention(c) (UnsafePointer<CChar>?) -> Handle?
    let status: @convention(c) (Handle?) -> Int32
    let errorMessage: @convention(c) (Handle?) -> Text?
    let finish: @convention(c) (Handle?) -> Void
    let reset: @convention(c) (Handle?) -> Void
    let execParams: @convention(c) (Handle?, UnsafePointer<CChar>?, Int32, UnsafePointer<UInt32>?,
                                    UnsafePointer<UnsafePointer<CChar>?>?, UnsafePointer<Int32>?,
                                    UnsafePointer<Int32>?, Int32) -> Handle?
    let resultStatus: @convention(c) (Handle?) -> Int32
    let resultErrorField: @convention(c) (Handle?, Int32) -> Text?
    let ntuples: @convention(c) (Handle?) -> Int32
    let nfields: @convention(c) (Handle?) -> Int32
    let getvalue: @convention(c) (Handle?, Int32, Int32) -> Text?
    let getisnull: @convention(c) (Handle?, Int32, Int32) -> Int32
    let cmdTuples: @convention(c) (Handle?) -> Text?
    let clear: @convention(c) (Handle?) -> Void
    let socket: @convention(c) (Handle?) -> Int32
    let consumeInput: @convention(c) (Handle?) -> Int32
    let notifies: @convention(c) (Handle?) -> UnsafeMutableRawPointer?
    let freemem: @convention(c) (UnsafeMutableRawPointer?) -> Void
    let conninfoParse: @convention(c) (UnsafePointer<CChar>?, UnsafeMutablePointer<Text?>?) -> UnsafeMutableRawPointer?
    let conninfoFree: @convention(c) (UnsafeMutableRawPointer?) -> Void
    let libVersion: @convention(c) () -> Int32

    /// The names the library goes by, tried in order.
    static let names = ["libpq.so.5", "libpq.5.dylib", "libpq.so", "libpq.dylib"]

    /// The system's libpq, loaded once.
    static let system: Result<LibPQ, ServiceError> = load(names: names)

    /// Loads the first of `names` that opens and has every function.
    ///
    /// - Returns: `store`, saying what to install, when none does.
    static func load(names: [String]) -> Result<LibPQ, ServiceError> {
        var reasons: [String] = []
        for name in names {
            guard let library = dlopen(name, RTLD_NOW | RTLD_LOCAL) else {
                reasons.append(dlerror().map { String(cString: $0) } ?? name)
                continue
            }
            if let loaded = LibPQ(library) { return .success(loaded) }
            reasons.append("\(name) lacks a function Haul calls")
            dlclose(library)
        }
        return .failure(ServiceError(.store, "a state in PostgreSQL needs its client library, libpq, which is not installed "
                                     + "(Debian and Ubuntu: apt install libpq5; macOS: brew install libpq): "
                                     + (reasons.last ?? "no name to try")))
    }

    /// Looks up every function; fails on the first one missing.
    private init?(_ library: UnsafeMutableRawPointer) {
        let lookup = Lookup(library: library)
        do {
            (connectdb, status, errorMessage) = try (lookup("PQconnectdb"), lookup("PQstatus"), lookup("PQerrorMessage"))
            (finish, reset) = try (lookup("PQfinish"), lookup("PQreset"))
            (execParams, resultStatus, resultErrorField) =
                try (lookup("PQexecParams"), lookup("PQresultStatus"), lookup("PQresultErrorField"))
            (ntuples, nfields, getvalue, getisnull) = try (lookup("PQntuples"), lookup("PQnfields"), lookup("PQgetvalue"), lookup("PQgetisnull"))
            (cmdTuples, clear) = try (lookup("PQcmdTuples"), lookup("PQclear"))
            (socket, consumeInput, notifies, freemem) =
                try (lookup("PQsocket"), lookup("PQconsumeInput"), lookup("PQnotifies"), lookup("PQfreemem"))
            (conninfoParse, conninfoFree, libVersion) = try (lookup("PQconninfoParse"), lookup("PQconninfoFree"), lookup("PQlibVersion"))
        } catch {
            return nil
        }
    }

    /// Finds a function of a loaded library by name, as the C function type asked for.
    private struct Lookup {
        struct Missing: Error {}
        let library: UnsafeMutableRawPointer

        func callAsFunction<Function>(_ name: String) throws(Missing) -> Function {
            guard let address = dlsym(library, name) else { throw Missing() }
            return unsafeBitCast(address, to: Function.self)
        }
    }
}
