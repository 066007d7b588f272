
extension HaulServer {
    /// Seeded random faults for soak runs, opt-in through `Configuration.chaos`.
    ///
    /// With chaos set, every `GET` of `/bytes/N` draws one outcome: served normally, or one of
    /// the ``Fault``s, each with its probability in ``Odds``. The mid-body faults happen after a
    /// random number of body bytes, drawn within the bytes the request asked for. A
    /// ``Fault/change`` makes the file the next version of itself, for this request and every
    /// later one (`GET` or `HEAD`) of the same target. The same seed and the same order of
    /// requests give the same faults. ``injected`` counts what was done, for the soak's report.
    public final class Chaos: Sendable {
        /// One kind of fault.
        public enum Fault: String, Sendable, CaseIterable, Hashable {
            /// The head and some body bytes, then a clean close (FIN): the body is cut short.
            case drop
            /// The head and some body bytes, then silence until the client gives up.
            case stall
            /// `503 Service Unavailable` (half of them with `Retry-After: 1`), no content.
            case unavailable
            /// The head and some body bytes, then a TCP reset (`SO_LINGER` 0).
            case reset
            /// The file changes before it is served: version V of `/bytes/N?seed=S` is the content
            /// of seed `S + V` with the ETag `"haul-N-S-vV"`, for every later request of the same
            /// target too (at most ``Chaos/maximumVersion``; past it the request is served).
            case change
        }

        /// The last version a file may change to.
        public static let maximumVersion = 3

        /// The probability of each fault per request; the rest are served normally.
        public struct Odds: Sendable {
            /// See ``Fault/drop``.
            public var drop: Double
            /// See ``Fault/stall``.
            public var stall: Double
            /// See ``Fault/unavailable``.
            public var unavailable: Double
            /// See ``Fault/reset``.
            public var reset: Double
            /// See ``Fault/change``.
            public var change: Double

            /// Creates odds; each is a probability in `0...1` and their sum should stay below 1.
            public init(drop: Double = 0.06, stall: Double = 0.03, unavailable: Double = 0.06, reset: Double = 0.06,
                        change: Double = 0) {
                self.drop = drop
                self.stall = stall
                self.unavailable = unavailable
                self.reset = reset
                self.change = change
            }
        }

        /// What a request gets.
        enum Decision: Equatable {
            case serve
            case unavailable(retryAfter: String?)
            case cut(Fault, afterBytes: Int64)
        }

        private struct State {
            var random: UInt64
            var injected: [Fault: Int] = [:]
            var versions: [String: Int] = [:]
        }

        /// The odds this chaos was created with.
        public let odds: Odds
        private let state: ServerLock<State>

        /// Creates a source of faults.
        ///
        /// - Parameters:
        ///   - seed: the random seed; the same seed and request order give the same faults.
        ///   - odds: the probability of each fault per request.
        public init(seed: UInt64, odds: Odds = Odds()) {
            self.odds = odds
            self.state = ServerLock(State(random: seed))
        }

        /// How many times each fault was injected so far.
        public var injected: [Fault: Int] {
            state.withLock { $0.injected }
        }

        /// The version `target` (a request's path and query) is served at; 0 until it changes.
        func version(of target: String) -> Int {
            state.withLock { $0.versions[target] ?? 0 }
        }

        /// Draws the outcome of one request for a body of `length` bytes.
        ///
        /// - Parameters:
        ///   - length: the bytes the request would get.
        ///   - target: the request's path and query, whose version a ``Fault/change`` bumps.
        func decide(length: Int64, target: String = "") -> Decision {
            state.withLock { state in
                let roll = Self.unit(&state.random)
                let position = Int64(Self.unit(&state.random) * Double(max(1, length)))
                let coin = Self.unit(&state.random) < 0.5
                var threshold = 0.0
                for fault in Fault.allCases {
                    threshold += probability(of: fault)
                    guard roll < threshold else { continue }
                    switch fault {
                    case .unavailable:
                        state.injected[fault, default: 0] += 1
                        return .unavailable(retryAfter: coin ? "1" : nil)
                    case .change:
                        let version = state.versions[target] ?? 0
                        guard version < Self.maximumVersion else { return .serve }
                        state.versions[target] = version + 1
                        state.injected[fault, default: 0] += 1
                        return .serve
                    case .drop, .stall, .reset:
                        state.injected[fault, default: 0] += 1
                        return .cut(fault, afterBytes: position)
                    }
                }
                return .serve
            }
        }

        private func probability(of fault: Fault) -> Double {
            switch fault {
            case .drop: odds.drop
            case .stall: odds.stall
            case .unavailable: odds.unavailable
            case .reset: odds.reset
            case .change: odds.change
            }
        }

        /// The next SplitMix64 number of `state`, as a number in `0..<1`.
        private static func unit(_ state: inout UInt64) -> Double {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return Double((z ^ (z >> 31)) >> 11) / Double(UInt64(1) << 53)
        }
    }
}

extension BytesRoute {
    /// Applies `Configuration.chaos` to a request of `/bytes/N`: serves the file's current
    /// version, and for a `GET` either changes how `response` ends, or answers 503 itself.
    ///
    /// - Returns: `nil` to go on with `response`; otherwise whether the connection may serve
    ///   another request (a 503 was sent).
    static func applyChaos(to response: inout ContentResponse, request: RecordedRequest,
                           on connection: ServerConnection) throws -> Bool? {
        guard let chaos = connection.core.configuration.chaos else { return nil }
        defer { serveVersion(chaos.version(of: request.target), of: &response) }
        guard request.method == "GET" else { return nil }
        // Cut within the bytes this request will get, so a fault never waits past a short range.
        var served = response.length
        if let range = request.header("range"), case .partial(let partial) = RangeRequest.decide(range: range, length: served) {
            served = Int64(partial.count)
        }
        switch chaos.decide(length: served, target: request.target) {
        case .serve:
            return nil
        case .unavailable(let retryAfter):
            let close = request.wantsClose
            let headers = retryAfter.map { [("Retry-After", $0)] } ?? []
            try connection.write(Response.simple(status: 503, body: "chaos: unavailable\n", close: close, headers: headers))
            return !close
        case .cut(let fault, let count):
            switch fault {
            case .drop: response.ending = .drop(after: count)
            case .stall: response.ending = .stall(after: count)
            case .reset: response.ending = .reset(after: count)
            case .unavailable, .change: break
            }
            return nil
        }
    }

    /// Makes `response` version `version` of its file: content seed plus the version, and the
    /// version in the ETag.
    private static func serveVersion(_ version: Int, of response: inout ContentResponse) {
        guard version > 0 else { return }
        response.seed &+= UInt64(version)
        response.etag = response.etag.map { String($0.dropLast()) + "-v\(version)\"" }
    }
}
