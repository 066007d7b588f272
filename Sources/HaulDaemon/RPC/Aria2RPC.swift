import HaulCore
import HaulService
import HaulJSON
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// aria2's JSON-RPC 2.0 over a ``DownloadService``: parses a request body (one call or a batch),
/// checks each call's `token:`, runs the method from ``Aria2Methods``, waits until the changes
/// it made are durable, and writes the reply.
///
/// Transport-free: the HTTP server and the WebSocket hand it bodies and send what it returns.
/// State changes are made in memory before the reply, so a `tellStatus` right after a `pause`
/// sees `paused`; nothing here waits for a transfer.
public final class Aria2RPC: Sendable {
    /// What the RPC needs besides the service.
    public struct Settings: Sendable {
        /// The secret every call but a few must carry as `token:SECRET`; `nil` turns the check off.
        public var secret: String?
        /// The address the daemon listens on (shown by `getGlobalOption`).
        public var listen: ListenAddress
        /// Connections of a download that asks for none (`split` and `max-connection-per-server`).
        public var connections: Int

        /// Creates settings.
        public init(secret: String?, listen: ListenAddress, connections: Int) {
            self.secret = secret
            self.listen = listen
            self.connections = connections
        }
    }

    /// What a body gets back.
    public struct Reply: Sendable, Equatable {
        /// The JSON text.
        public var body: [UInt8]
        /// The HTTP status (aria2's: 200, or 400/404/500 for a single call's fault).
        public var status: Int
        /// How many calls carried no valid token, each a guess (its answer is to be delayed).
        public var guesses: Int
        /// Whether a call carried the valid token (or authentication is off).
        public var authorized: Bool

        /// Whether a call carried no valid token.
        public var unauthorized: Bool { guesses > 0 }
    }

    /// The most calls in a batch, and in a `system.multicall`; a larger one is refused whole
    /// (-32600 or a failure) before any of its calls runs.
    public static let maximumBatchCalls = 1_000
    /// The largest answer to a body without the valid token: its calls stop once their answers
    /// pass it, and it is answered with one fixed error instead.
    public static let unauthenticatedAnswerBytes = 64 << 10

    let service: any DownloadQueue
    /// The overall rate: set by hand (`max-overall-download-limit`) or by the clock (`haul-limit-schedule`).
    let limits: RateScheduler
    let listen: ListenAddress
    /// A random session identifier (`getSessionInfo`).
    let sessionID: String
    private let secret: RPCSecret?
    private let secretText: String?
    private let defaultsState: SharedStateLock<Aria2Defaults>
    private let onShutdown: @Sendable (_ force: Bool) -> Void

    /// Creates the RPC.
    ///
    /// - Parameters:
    ///   - service: the download service.
    ///   - settings: the secret, the listen address and the default connections.
    ///   - limits: the overall rate's scheduler (the daemon starts its thread); default: one
    ///     without a schedule that sets the service's rate and follows no clock.
    ///   - onShutdown: called by `aria2.shutdown` and `aria2.forceShutdown` (after which the
    ///     daemon stops); the reply is `"OK"`.
    package init(service: any DownloadQueue, settings: Settings, limits: RateScheduler? = nil,
                 onShutdown: @escaping @Sendable (_ force: Bool) -> Void) {
        self.service = service
        self.limits = limits ?? RateScheduler(schedule: LimitSchedule(), outside: service.rateLimit) { service.setRateLimit($0.rate) }
        listen = settings.listen
        secret = settings.secret.map(RPCSecret.init)
        secretText = settings.secret.flatMap { $0.isEmpty ? nil : $0 }
        defaultsState = SharedStateLock(Aria2Defaults(connections: settings.connections, downloadLimit: nil))
        self.onShutdown = onShutdown
        var generator = SystemRandomNumberGenerator()
        sessionID = (0..<20).map { _ in String(UInt8.random(in: 0...255, using: &generator), radix: 16) }
            .map { $0.count == 1 ? "0" + $0 : $0 }.joined()
    }

    /// Whether calls need a token.
    public var requiresToken: Bool { secret != nil }

    var defaults: Aria2Defaults { defaultsState.withLock { $0 } }

    func setDefaults(_ defaults: Aria2Defaults) {
        defaultsState.withLock { $0 = defaults }
    }

    func requestShutdown(force: Bool) -> JSONValue {
        onShutdown(force)
        return "OK"
    }

    /// Text with the secret, if it occurs, replaced by `***`.
    public func redacting(_ text: String) -> String {
        guard let secretText, text.contains(secretText) else { return text }
        return text.replacing(secretText, with: "***")
    }

    /// What one body's calls met.
    struct Exchange {
        /// The first and the last commit tickets of the body's changes (`nil`: none).
        var firstTicket: UInt64?
        var ticket: UInt64?
        /// Calls without the valid token.
        var guesses = 0
        /// The most tokens checked that are wrong; calls after them are refused unchecked.
        var guessLimit = Int.max
        /// Whether a call carried the valid token (or the check is off): from then on the
        /// answers may quote the caller's text, and are not counted against the budget.
        var authorized: Bool
        /// The bytes answered before the valid token, while it is missing.
        var unauthenticatedBytes = 0

        /// Whether the answers before the valid token passed their budget.
        var overBudget: Bool { !authorized && unauthenticatedBytes > Aria2RPC.unauthenticatedAnswerBytes }

        /// Counts an answer against the budget while the token is missing.
        mutating func answered(_ value: JSONValue) {
            if !authorized { unauthenticatedBytes += JSONWriter.encode(value).count }
        }
    }

    /// Handles one request body: a call, or a batch (an array of calls).
    ///
    /// - Parameters:
    ///   - body: the request's body.
    ///   - guessLimit: the most wrong tokens checked; a call with a token after them is
    ///     answered `Unauthorized` without a check (and is no guess).
    public func handle(_ body: some Collection<UInt8>, guessLimit: Int = .max) -> Reply {
        var exchange = Exchange(authorized: secret == nil)
        exchange.guessLimit = guessLimit
        let parsed: JSONValue
        do throws(JSONParseError) {
            parsed = try JSONParser().parse(body)
        } catch {
            return reply(RPCResponse(id: .null, outcome: .failure(.parseError)), exchange)
        }
        switch parsed {
        case .object(let object):
            let response = process(object, &exchange)
            if let failed = durability(exchange, id: response.id) { return failed }
            return reply(response, exchange)
        case .array(let calls) where !calls.isEmpty:
            guard calls.count <= Self.maximumBatchCalls else { return reply(RPCResponse(id: .null, outcome: .failure(.batchTooLarge)), exchange) }
            var responses: [JSONValue] = []
            for call in calls where !exchange.overBudget {
                guard let object = call.object else { continue }
                responses.append(process(object, &exchange).json)
            }
            if let failed = durability(exchange, id: .null) { return failed }
            return bounded(Reply(body: JSONWriter.encode(.array(responses)), status: 200, guesses: exchange.guesses,
                                 authorized: exchange.authorized), exchange)
        default:
            return reply(RPCResponse(id: .null, outcome: .failure(.invalidRequest)), exchange)
        }
    }

    private func reply(_ response: RPCResponse, _ exchange: Exchange) -> Reply {
        let status = if case .failure(let fault) = response.outcome { fault.httpStatus } else { 200 }
        return bounded(Reply(body: JSONWriter.encode(response.json), status: status, guesses: exchange.guesses,
                             authorized: exchange.authorized), exchange)
    }

    /// `reply`, or the fixed error when it has no valid token and is over the budget.
    private func bounded(_ reply: Reply, _ exchange: Exchange) -> Reply {
        guard !exchange.authorized, exchange.overBudget || reply.body.count > Self.unauthenticatedAnswerBytes else { return reply }
        let fault = RPCFault.answerOverBudget
        return Reply(body: JSONWriter.encode(RPCResponse(id: .null, outcome: .failure(fault)).json), status: fault.httpStatus,
                     guesses: exchange.guesses, authorized: false)
    }

    /// The reply when the changes could not be made durable, else `nil`.
    private func durability(_ exchange: Exchange, id: JSONValue) -> Reply? {
        do throws(ServiceError) {
            try service.waitUntilDurable(exchange.ticket, since: exchange.firstTicket)
            return nil
        } catch {
            let fault = RPCFault.failure("the change was made but could not be saved: \(error.message)")
            return Reply(body: JSONWriter.encode(RPCResponse(id: id, outcome: .failure(fault)).json), status: 500,
                         guesses: exchange.guesses, authorized: exchange.authorized)
        }
    }

    /// One request object: `id` and `method` required, `params` an array if present. Its
    /// answer counts against the budget of a body without the valid token.
    private func process(_ request: JSONObject, _ exchange: inout Exchange) -> RPCResponse {
        let response = run(request, &exchange)
        exchange.answered(response.json)
        return response
    }

    private func run(_ request: JSONObject, _ exchange: inout Exchange) -> RPCResponse {
        guard let id = request["id"] else { return RPCResponse(id: .null, outcome: .failure(.invalidRequest)) }
        guard let name = request["method"]?.string else { return RPCResponse(id: id, outcome: .failure(.invalidRequest)) }
        let params: [JSONValue]
        switch request["params"] {
        case nil: params = []
        case .array(let list)?: params = list
        default: return RPCResponse(id: id, outcome: .failure(.invalidParams))
        }
        guard let method = Aria2Methods.byName[name] else { return RPCResponse(id: id, outcome: .failure(.methodNotFound)) }
        return RPCResponse(id: id, outcome: invoke(method, params, &exchange))
    }

    /// Checks the token (for methods that take one), then runs the method. A missing or wrong
    /// token is one guess.
    func invoke(_ method: Aria2Method, _ params: [JSONValue], _ exchange: inout Exchange) -> Result<JSONValue, RPCFault> {
        var params = params
        if method.takesToken {
            var token: String?
            if let first = params.first?.string, first.hasPrefix("token:") {
                token = String(first.dropFirst(6))
                params.removeFirst()
            }
            if let secret {
                guard exchange.guesses < exchange.guessLimit else { return .failure(.unauthorized) }
                guard let token, secret.matches(token) else {
                    exchange.guesses += 1
                    return .failure(.unauthorized)
                }
            }
            exchange.authorized = true
        }
        var call = Aria2Call(rpc: self, params: params, exchange: exchange)
        defer { exchange = call.exchange }
        do throws(RPCFault) {
            return .success(try method.run(&call))
        } catch {
            return .failure(RPCFault(code: error.code, message: redacting(error.message)))
        }
    }

    /// `system.multicall`: each `{"methodName":…,"params":[…]}` with its own token; a success is
    /// `[result]`, a failure the error object. Before the valid token, no text of the call
    /// comes back (an unknown method is not named) and the answers count against the budget.
    func multicall(_ call: inout Aria2Call) throws(RPCFault) -> JSONValue {
        let specs = try call.parameter(0, required: true, \.array)!
        guard specs.count <= Self.maximumBatchCalls else { throw RPCFault.multicallTooLarge }
        var results: [JSONValue] = []
        results.reserveCapacity(specs.count)
        for spec in specs where !call.exchange.overBudget {
            let result = multicallEntry(spec, &call.exchange)
            call.exchange.answered(result)
            results.append(result)
        }
        return .array(results)
    }

    private func multicallEntry(_ spec: JSONValue, _ exchange: inout Exchange) -> JSONValue {
        guard let object = spec.object else { return RPCFault.failure("system.multicall expected struct.").json }
        guard let name = object["methodName"]?.string else { return RPCFault.failure("Missing methodName.").json }
        guard name != "system.multicall" else { return RPCFault.failure("Recursive system.multicall forbidden.").json }
        guard let method = Aria2Methods.byName[name] else {
            return RPCFault.failure(exchange.authorized ? "No such method: \(redacting(name))" : "No such method.").json
        }
        switch invoke(method, object["params"]?.array ?? [], &exchange) {
        case .success(let result): return [result]
        case .failure(let fault): return fault.json
        }
    }
}
