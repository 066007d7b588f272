#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import HaulCore

/// How many response-head bytes and lines may still be received.
///
/// One budget is shared by interim (1xx) responses, the final response, its chunked trailers
/// and every hop of a redirect chain, so a server cannot make Haul buffer more than this in total.
/// Bytes count every byte of the head, CR and LF included; lines count every line, the status
/// line and the empty line that ends the head included.
package struct HeaderBudget: Sendable, Equatable {
    /// Bytes left.
    package var bytes: Int
    /// Lines left.
    package var lines: Int

    package init(bytes: Int = 64 * 1024, lines: Int = 200) {
        self.bytes = bytes
        self.lines = lines
    }
}

/// A strict, incremental HTTP/1.x response parser: a pure state machine with no I/O.
///
/// Feed it each buffer read from the connection with an `offset` starting at 0 and call
/// ``parse(_:offset:)`` until it returns `.needMore` (every byte was consumed; refill the buffer).
/// It returns `.head` once, then `.body` ranges (indices into the buffer you passed: no copy),
/// then `.end`. Bytes after `.end` are ignored. Call ``inputEnded()`` when the peer closes.
///
/// Framing follows RFC 9112 §6.3. Limits are enforced as soon as they are exceeded, so a
/// never-ending header line or block fails without buffering more than the budget.
package struct ResponseParser: Sendable {
    /// What a call to ``parse(_:offset:)`` produced.
    package enum Event: Equatable {
        /// Every byte was consumed; call again with new bytes.
        case needMore
        /// The final (non-1xx) response head.
        case head(ResponseHead)
        /// Body bytes: indices into the buffer that was passed.
        case body(Range<Int>)
        /// The response is complete.
        case end
    }

    /// How the body is delimited.
    package enum Framing: Equatable {
        /// No body (HEAD, 204, 304).
        case none
        /// Exactly this many bytes (`Content-Length`).
        case length(Int64)
        /// `Transfer-Encoding: chunked`.
        case chunked
        /// Until the server closes the connection.
        case untilClose
    }

    package enum State: Sendable {
        case head
        case body(remaining: Int64)
        case untilClose
        case chunkSize
        case chunkData(remaining: Int64)
        case chunkDataEnd
        case trailers
        case done
    }

    /// The budget left after this response's head (and trailers): pass it to the next hop.
    package private(set) var budget: HeaderBudget
    /// The body framing, known once `.head` was returned.
    package private(set) var framing: Framing?

    package let method: HTTPMethod
    package var state = State.head
    /// A partial line carried over between reads (head, chunk size, trailers).
    package var line: [UInt8] = []
    package var receivedHeadByte = false
    package var statusLine: (minorVersion: Int, status: Int, reason: String)?
    package var fields: [(name: String, value: String)] = []
    package var failure: HTTPClientError?

    /// Creates a parser for the response to one request.
    ///
    /// - Parameters:
    ///   - method: the request method (a response to HEAD has no body).
    ///   - budget: what is left of the header limits (from the previous hop's parser).
    package init(method: HTTPMethod, budget: HeaderBudget = HeaderBudget()) {
        self.method = method
        self.budget = budget
    }

    /// Consumes bytes from `input[offset...]` and returns the next event.
    ///
    /// - Parameters:
    ///   - input: the bytes just read (pass the same buffer again until `.needMore`).
    ///   - offset: where to start; advanced past what was consumed.
    /// - Returns: the next event.
    /// - Throws: `.malformedResponse`, `.headersTooLarge`, `.invalidContentLength` or
    ///   `.invalidChunk`. After a throw, every later call throws the same error.
    package mutating func parse(_ input: UnsafeRawBufferPointer, offset: inout Int) throws(HTTPClientError) -> Event {
        if let failure { throw failure }
        do {
            return try step(input, &offset)
        } catch {
            failure = error
            throw error
        }
    }

    /// The body bytes still to come of a body of known length being read; `nil` in any other state.
    package var bodyRemaining: Int64? {
        guard failure == nil, case .body(let remaining) = state else { return nil }
        return remaining
    }

    /// Counts `count` body bytes the caller read past the parser (straight into its own memory);
    /// at most ``bodyRemaining``.
    package mutating func bodyReadElsewhere(_ count: Int) {
        guard case .body(let remaining) = state, Int64(count) <= remaining else {
            preconditionFailure("bytes read past the parser outside a body of known length")
        }
        state = .body(remaining: remaining - Int64(count))
    }

    /// Reports that the peer closed the connection.
    ///
    /// - Returns: `.end` when the message is complete (or delimited by the close).
    /// - Throws: `.connectionReset` when no byte of the head arrived, `.malformedResponse` when
    ///   the head is partial, `.truncatedBody` when the body was cut short.
    package mutating func inputEnded() throws(HTTPClientError) -> Event {
        if let failure { throw failure }
        let error: HTTPClientError
        switch state {
        case .done, .untilClose, .body(remaining: 0):
            state = .done
            return .end
        case .head where !receivedHeadByte:
            error = HTTPClientError(.connectionReset, "server closed the connection before answering")
        case .head:
            error = HTTPClientError(.malformedResponse, "the connection closed in the middle of the response head")
        case .body(let remaining):
            if case .length(let total)? = framing {
                error = HTTPClientError(.truncatedBody, "the connection closed after \(total - remaining) of \(total) body bytes")
            } else {
                error = HTTPClientError(.truncatedBody, "the connection closed before the end of the body")
            }
        case .chunkSize, .chunkData, .chunkDataEnd, .trailers:
            error = HTTPClientError(.truncatedBody, "the connection closed before the last chunk of the body")
        }
        failure = error
        throw error
    }

    private mutating func step(_ input: UnsafeRawBufferPointer, _ offset: inout Int) throws(HTTPClientError) -> Event {
        switch state {
        case .head:
            return try parseHead(input, &offset)
        case .body(let remaining):
            if remaining == 0 {
                state = .done
                return .end
            }
            let available = input.count - offset
            if available <= 0 { return .needMore }
            let count = available < remaining ? available : Int(remaining)
            let range = offset..<(offset + count)
            offset += count
            state = .body(remaining: remaining - Int64(count))
            return .body(range)
        case .untilClose:
            if offset >= input.count { return .needMore }
            let range = offset..<input.count
            offset = input.count
            return .body(range)
        case .chunkSize, .chunkData, .chunkDataEnd, .trailers:
            return try parseChunked(input, &offset)
        case .done:
            offset = max(offset, input.count)
            return .end
        }
    }

    // MARK: Head

    private mutating func parseHead(_ input: UnsafeRawBufferPointer, _ offset: inout Int) throws(HTTPClientError) -> Event {
        while offset < input.count {
            receivedHeadByte = true
            // A line wholly in `input` (the usual case) is read where it is; one that started in
            // an earlier buffer, or whose end is not here yet, is gathered in `line`.
            if line.isEmpty, let whole = try wholeLine(input, &offset) {
                if let event = try headLine(whole) { return event }
                continue
            }
            guard try readBudgetedLine(input, &offset) else {
                if statusLine == nil { try checkLooksLikeHTTP(line) }
                return .needMore
            }
            var gathered: [UInt8] = []
            swap(&gathered, &line)   // moved out, not copied: its storage comes back below
            let event = try gathered.withBytes { bytes throws(HTTPClientError) in try headLine(bytes) }
            gathered.removeAll(keepingCapacity: true)
            line = gathered
            if let event { return event }
        }
        return .needMore
    }

    /// Takes one complete line of the head (status line, field or the empty line); the head's
    /// event when the line completes it.
    private mutating func headLine(_ line: UnsafeRawBufferPointer) throws(HTTPClientError) -> Event? {
        guard statusLine != nil else {
            statusLine = try parseStatusLine(line)
            return nil
        }
        if !line.isEmpty {
            // Room for a usual head at once (growing 1, 2, 4, 8 cost three more allocations).
            if fields.capacity == 0 { fields.reserveCapacity(12) }
            fields.append(try parseField(line))
            return nil
        }
        // The empty line: the head is complete.
        let (minorVersion, status, reason) = statusLine!
        let head = ResponseHead(minorVersion: minorVersion, status: status, reason: reason, headers: HTTPHeaders(fields))
        statusLine = nil
        fields = []
        if status == 101 {
            throw HTTPClientError(.malformedResponse, "the server answered 101 Switching Protocols, which Haul does not use")
        }
        if status < 200 { return nil }  // interim response (100, 103...): skip it
        let framing = try Self.framing(of: head, method: method)
        self.framing = framing
        switch framing {
        case .none: state = .done
        case .length(let length): state = .body(remaining: length)
        case .chunked: state = .chunkSize
        case .untilClose: state = .untilClose
        }
        return .head(head)
    }

    /// The next line of `input` without its line ending, read in place, when it ends within
    /// `input` and the budget; `nil` (nothing consumed) otherwise. Checks as ``readBudgetedLine(_:_:)``.
    private mutating func wholeLine(_ input: UnsafeRawBufferPointer, _ offset: inout Int) throws(HTTPClientError) -> UnsafeRawBufferPointer? {
        let limit = min(input.count, offset + budget.bytes)
        guard limit > offset, let base = input.baseAddress,
              let found = memchr(base + offset, 0x0A, limit - offset) else { return nil }
        let lineFeed = base.distance(to: UnsafeRawPointer(found))
        budget.bytes -= lineFeed + 1 - offset
        guard budget.lines > 0 else { throw tooLarge() }
        budget.lines -= 1
        var end = lineFeed
        if end > offset && input[end - 1] == 0x0D { end -= 1 }
        let bytes = UnsafeRawBufferPointer(rebasing: input[offset..<end])
        offset = lineFeed + 1
        if let start = bytes.baseAddress, memchr(start, 0x0D, bytes.count) != nil {
            throw HTTPClientError(.malformedResponse, "a response header line contains a bare CR")
        }
        if let start = bytes.baseAddress, memchr(start, 0, bytes.count) != nil {
            throw HTTPClientError(.malformedResponse, "a response header line contains a NUL byte")
        }
        return bytes
    }

    /// Reads up to the next LF into `line` (CRLF or LF stripped), charging the header budget.
    ///
    /// - Returns: `true` when `line` holds a complete line, `false` when every byte was consumed.
    /// - Throws: `.headersTooLarge` as soon as the byte or line budget is exceeded;
    ///   `.malformedResponse` for a NUL or a bare CR.
    package mutating func readBudgetedLine(_ input: UnsafeRawBufferPointer, _ offset: inout Int) throws(HTTPClientError) -> Bool {
        let limit = min(input.count, offset + budget.bytes)
        var index = offset
        while index < limit && input[index] != 0x0A { index += 1 }
        let found = index < limit
        let end = found ? index + 1 : limit
        line.append(contentsOf: UnsafeRawBufferPointer(rebasing: input[offset..<end]))
        budget.bytes -= end - offset
        offset = end
        guard found else {
            if limit < input.count { throw tooLarge() }
            return false
        }
        guard budget.lines > 0 else { throw tooLarge() }
        budget.lines -= 1
        line.removeLast()  // LF
        if line.last == 0x0D { line.removeLast() }
        if line.contains(0x0D) { throw HTTPClientError(.malformedResponse, "a response header line contains a bare CR") }
        if line.contains(0) { throw HTTPClientError(.malformedResponse, "a response header line contains a NUL byte") }
        return true
    }

    private func tooLarge() -> HTTPClientError {
        HTTPClientError(.headersTooLarge, "the response headers are too large (over the header byte or line limit)")
    }
}
