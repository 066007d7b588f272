import HaulCore
/// Reads one response from a connection through ``ResponseParser``: the head first, then the
/// body, handing each body slice to the caller straight from the receive buffer (no copy).
package final class ResponseReader {
    package let connection: Connection
    package private(set) var parser: ResponseParser
    private let buffer: UnsafeMutableRawBufferPointer
    private var length = 0
    private var offset = 0
    private var ended = false
    /// The most bytes one read may ask for (a rate limit keeps reads small so its sleeps stay short).
    package var readLimit: Int
    /// The slowest the body may arrive (see ``LowSpeedMonitor``); `nil`: no floor.
    package var lowSpeedLimit: LowSpeedMonitor.SpeedFloor?
    private var monitor: LowSpeedMonitor?
    /// Set when a read closed a window below the floor: the bytes of that read are still
    /// delivered, and the next read fails.
    private var tooSlow = false

    /// - Parameters:
    ///   - buffer: the receive buffer, owned by the caller and reused for the whole transfer.
    package init(connection: Connection, method: HTTPMethod, budget: HeaderBudget, buffer: UnsafeMutableRawBufferPointer) {
        self.connection = connection
        self.parser = ResponseParser(method: method, budget: budget)
        self.buffer = buffer
        self.readLimit = buffer.count
    }

    /// Whether the rest of the body (of a known length) is in the receive buffer already, so
    /// reading it waits for nothing.
    package var bodyIsBuffered: Bool {
        guard !ended, case .body(let remaining) = parser.state else { return false }
        return remaining <= Int64(length - offset)
    }

    /// Whether the whole response was read with the connection still open and nothing extra
    /// buffered, so the connection can carry another request.
    package var isReusable: Bool { bodyEnded && !ended && offset == length }
    private var bodyEnded = false

    /// Reads until the response head is complete.
    ///
    /// - Parameters:
    ///   - deadline: when the whole head must have arrived.
    ///   - stallTimeout: the longest wait for the next byte of it (waiting for the head counts as
    ///     a stall, as waiting for the body does); `nil`: only the deadline.
    /// - Throws: `headerTimeout`, `stalled`, parser errors, network errors.
    package func readHead(deadline: ContinuousClock.Instant, stallTimeout: Duration? = nil) throws(HTTPClientError) -> ResponseHead {
        let wait = { () -> (Duration, HTTPClientError.Kind) in
            let left = deadline - ContinuousClock.now
            guard let stallTimeout, stallTimeout < left else { return (left, .headerTimeout) }
            return (stallTimeout, .stalled)
        }
        while true {
            switch try nextEvent(wait) {
            case .head(let head): return head
            case .body, .end, .needMore:
                throw HTTPClientError(.malformedResponse, "the response ended before its head")
            }
        }
    }

    /// Reads the body, calling `sink` with each slice in order, until the body ends or `sink`
    /// returns `false`.
    ///
    /// - Parameters:
    ///   - stallTimeout: the longest wait for the next byte.
    ///   - destination: where the caller wants the next bytes (`nil` or empty: anywhere). While
    ///     nothing is buffered and the body has a known length, they are read straight into it
    ///     (and decrypted there), and `sink` gets that memory: the caller copies nothing.
    ///   - sink: receives each slice (it must not keep the pointer) and says whether to go on.
    /// - Returns: `true` when the body ended, `false` when `sink` stopped early.
    /// - Throws: `truncatedBody`, `stalled` (no byte for `stallTimeout`, or slower than
    ///   ``lowSpeedLimit``), parser and network errors.
    @discardableResult
    package func readBody(stallTimeout: Duration, into destination: (() -> UnsafeMutableRawBufferPointer?)? = nil,
                          _ sink: (UnsafeRawBufferPointer) -> Bool) throws(HTTPClientError) -> Bool {
        if monitor == nil, let lowSpeedLimit { monitor = LowSpeedMonitor(lowSpeedLimit) }
        while true {
            if let destination, let target = directTarget(destination) {
                let n = try receive(into: target, { (stallTimeout, .stalled) })
                if n == 0 { continue }   // the parser reports the cut
                parser.bodyReadElsewhere(n)
                if !sink(UnsafeRawBufferPointer(rebasing: target[0..<n])) {
                    noteEndIfReached()
                    return false
                }
                continue
            }
            switch try nextEvent({ (stallTimeout, .stalled) }) {
            case .body(let range):
                if !sink(UnsafeRawBufferPointer(rebasing: buffer[range])) {
                    noteEndIfReached()
                    return false
                }
            case .end:
                bodyEnded = true
                return true
            case .head, .needMore:
                throw HTTPClientError(.malformedResponse, "unexpected second response head")
            }
        }
    }

    /// The caller's memory for the next read, when the body can go there: nothing buffered, a
    /// known length still to come. At most that length and ``readLimit``.
    private func directTarget(_ destination: () -> UnsafeMutableRawBufferPointer?) -> UnsafeMutableRawBufferPointer? {
        guard !ended, offset == length, let remaining = parser.bodyRemaining, remaining > 0,
              let target = destination(), !target.isEmpty else { return nil }
        let count = Int(min(Int64(min(target.count, readLimit)), remaining))
        return UnsafeMutableRawBufferPointer(rebasing: target[0..<count])
    }

    /// After the caller stopped reading: if the body ends exactly there (the caller took its
    /// last byte), the response is complete and the connection can carry another request.
    private func noteEndIfReached() {
        guard !ended, case .end? = try? parser.parse(UnsafeRawBufferPointer(rebasing: buffer[0..<length]), offset: &offset) else {
            return
        }
        bodyEnded = true
    }

    /// The next parser event, reading when the parser needs more. `wait` gives the longest wait
    /// for the next read and the error of a wait that runs out.
    private func nextEvent(_ wait: () -> (Duration, HTTPClientError.Kind)) throws(HTTPClientError) -> ResponseParser.Event {
        while true {
            if ended { return try parser.inputEnded() }
            let event = try parser.parse(UnsafeRawBufferPointer(rebasing: buffer[0..<length]), offset: &offset)
            guard case .needMore = event else { return event }
            let n = try receive(into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<min(readLimit, buffer.count)]), wait)
            length = n
            offset = 0
            if n == 0, connection.closedWithoutNotify, case .untilClose? = parser.framing {
                throw HTTPClientError(.truncatedBody, "the TLS connection closed without close_notify, so the body may be cut short")
            }
        }
    }

    /// One read into `target`, within the wait `wait` gives (and the low-speed floor); 0 when
    /// the peer closed the connection (``ended`` is then set).
    private func receive(into target: UnsafeMutableRawBufferPointer,
                         _ wait: () -> (Duration, HTTPClientError.Kind)) throws(HTTPClientError) -> Int {
        let (timeout, timeoutCode) = wait()
        if timeout <= .zero {
            throw HTTPClientError(timeoutCode, timeoutCode == .headerTimeout ? "the response head did not arrive in time" : "no data for too long (stalled)")
        }
        if tooSlow, let monitor { throw monitor.failure }
        let started = monitor == nil ? nil : ContinuousClock.now
        let n = try connection.read(into: target, timeout: timeout, timeoutCode: timeoutCode)
        if let started, n > 0, monitor?.received(n, after: ContinuousClock.now - started) == true { tooSlow = true }
        if n == 0 { ended = true }
        return n
    }
}
