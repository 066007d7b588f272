import HaulService
import HaulJSON

/// One call of an aria2 method: its parameters (the token already taken off), what it may
/// reach, and the state file commit its reply must wait for.
struct Aria2Call {
    /// The dispatcher (service, defaults, controls).
    let rpc: Aria2RPC
    /// The parameters after the token.
    var params: [JSONValue]
    /// What the body's calls met so far, this one's changes (and a multicall's calls) included.
    var exchange: Aria2RPC.Exchange

    /// The service.
    var service: any DownloadQueue { rpc.service }

    /// Notes a change's commit and returns its value.
    @discardableResult
    mutating func note<Value>(_ change: DownloadService.Acknowledged<Value>) -> Value {
        if let new = change.ticket {
            exchange.ticket = max(exchange.ticket ?? 0, new)
            exchange.firstTicket = min(exchange.firstTicket ?? .max, new)
        }
        return change.value
    }

    /// Runs a service change, turning its error into aria2's.
    mutating func change<Value>(_ body: () throws(ServiceError) -> DownloadService.Acknowledged<Value>) throws(RPCFault) -> Value {
        do throws(ServiceError) {
            return note(try body())
        } catch {
            throw RPCFault.failure(error.message)
        }
    }

    /// Runs a read of the list, turning its error into aria2's (a fleet's list while PostgreSQL
    /// cannot be reached).
    func read<Value>(_ body: () throws(ServiceError) -> Value) throws(RPCFault) -> Value {
        do throws(ServiceError) {
            return try body()
        } catch {
            throw RPCFault.failure(error.message)
        }
    }

    /// Parameter `index`, if present, of the type `take` reads (`nil` from it: wrong type).
    func parameter<T>(_ index: Int, required: Bool, _ take: (JSONValue) -> T?) throws(RPCFault) -> T? {
        guard index < params.count else {
            if required { throw RPCFault.failure("The parameter at \(index) is required but missing.") }
            return nil
        }
        guard let value = take(params[index]) else { throw RPCFault.failure("The parameter at \(index) has wrong type.") }
        return value
    }

    /// A required string parameter.
    func string(_ index: Int) throws(RPCFault) -> String {
        try parameter(index, required: true, \.string)!
    }

    /// A required integer parameter.
    func integer(_ index: Int) throws(RPCFault) -> Int {
        Int(clamping: try parameter(index, required: true, \.integer)!)
    }

    /// An optional object parameter.
    func object(_ index: Int) throws(RPCFault) -> JSONObject? {
        try parameter(index, required: false, \.object)
    }

    /// The `keys` parameter at `index`: the strings of an array (an absent or empty list is all keys).
    func keys(_ index: Int) throws(RPCFault) -> Set<String>? {
        let list = try parameter(index, required: false, \.array)
        let keys = Set((list ?? []).compactMap(\.string))
        return keys.isEmpty ? nil : keys
    }

    /// The GID at `index`: 16 hexadecimal digits, or a unique prefix of a known one (aria2's rules
    /// and words).
    func gid(_ index: Int) throws(RPCFault) -> DownloadID {
        let text = try string(index)
        guard (1...16).contains(text.utf8.count), text.utf8.allSatisfy(\.isHexDigit) else {
            throw RPCFault.failure("Invalid GID \(text)")
        }
        let found = try read { () throws(ServiceError) in try service.identifiers(withPrefix: text, limit: 2) }
        switch found.count {
        case 1: return found[0]
        case 0: throw RPCFault.failure("GID \(text) is not found")
        default: throw RPCFault.failure("GID \(text) is not unique")
        }
    }
}

extension UInt8 {
    /// `0`-`9`, `a`-`f`, `A`-`F`.
    var isHexDigit: Bool {
        (0x30...0x39).contains(self) || (0x41...0x46).contains(self) || (0x61...0x66).contains(self)
    }
}

/// aria2's pagination of `tellWaiting` and `tellStopped` (`getPaginationRange`): a negative
/// offset counts from the end, and the answer then runs backwards.
enum Aria2Pagination {
    /// The places of a list of `size` that `offset` and `count` pick, and whether to list them in
    /// reverse.
    static func page(offset: Int, count: Int, size: Int) -> (range: Range<Int>, reversed: Bool) {
        let limit = 1 << 40
        let offset = min(max(offset, -limit), limit), count = min(max(count, 0), limit)
        var start = offset, wanted = count
        if offset < 0 {
            let fromEnd = offset + size
            if fromEnd < 0 { return (0..<0, true) }
            start = fromEnd - (count - 1)
            if start < 0 {
                start = 0
                wanted = fromEnd + 1
            }
        } else if size <= offset {
            return (0..<0, false)
        }
        let end = min(size, start + wanted)
        return (start..<max(start, end), offset < 0)
    }
}
