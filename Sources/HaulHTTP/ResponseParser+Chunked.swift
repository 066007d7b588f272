import HaulCore
// The chunked transfer coding (RFC 9112 §7.1).

extension ResponseParser {
    /// The longest chunk-size line accepted (size and ignored extensions).
    package static let maximumChunkSizeLine = 4096

    package mutating func parseChunked(_ input: UnsafeRawBufferPointer, _ offset: inout Int) throws(HTTPClientError) -> Event {
        while true {
            switch state {
            case .chunkSize:
                guard try readChunkLine(input, &offset) else { return .needMore }
                let size = try Self.parseChunkSize(line)
                line.removeAll(keepingCapacity: true)
                state = size == 0 ? .trailers : .chunkData(remaining: size)
            case .chunkData(let remaining):
                let available = input.count - offset
                if available <= 0 { return .needMore }
                let count = available < remaining ? available : Int(remaining)
                let range = offset..<(offset + count)
                offset += count
                state = remaining == Int64(count) ? .chunkDataEnd : .chunkData(remaining: remaining - Int64(count))
                return .body(range)
            case .chunkDataEnd:
                // Exactly CRLF (or a lone LF) must follow the data.
                while offset < input.count {
                    let byte = input[offset]
                    offset += 1
                    if byte == 0x0A && (line.isEmpty || line == [0x0D]) {
                        line.removeAll(keepingCapacity: true)
                        state = .chunkSize
                        break
                    }
                    guard byte == 0x0D && line.isEmpty else {
                        throw HTTPClientError(.invalidChunk, "chunk data is not followed by CRLF")
                    }
                    line.append(byte)
                }
                if case .chunkDataEnd = state { return .needMore }
            case .trailers:
                guard try readBudgetedLine(input, &offset) else { return .needMore }
                defer { line.removeAll(keepingCapacity: true) }
                if line.isEmpty {
                    state = .done
                    return .end
                }
                _ = try line.withBytes { bytes throws(HTTPClientError) in try parseField(bytes) }  // validated, then ignored
            default:
                return .needMore  // not reached: only chunked states are routed here
            }
        }
    }

    /// Reads a chunk-size line into `line` (line ending stripped).
    ///
    /// - Returns: `true` when complete, `false` when every byte was consumed.
    private mutating func readChunkLine(_ input: UnsafeRawBufferPointer, _ offset: inout Int) throws(HTTPClientError) -> Bool {
        let limit = min(input.count, offset + (Self.maximumChunkSizeLine - line.count))
        var index = offset
        while index < limit && input[index] != 0x0A { index += 1 }
        let found = index < limit
        let end = found ? index + 1 : limit
        line.append(contentsOf: UnsafeRawBufferPointer(rebasing: input[offset..<end]))
        offset = end
        guard found else {
            if limit < input.count { throw HTTPClientError(.invalidChunk, "a chunk size line is too long") }
            return false
        }
        line.removeLast()
        if line.last == 0x0D { line.removeLast() }
        return true
    }

    /// `1*HEXDIG [ BWS ";" extensions ]`, overflow-checked.
    package static func parseChunkSize(_ line: [UInt8]) throws(HTTPClientError) -> Int64 {
        var size: Int64 = 0
        var index = 0
        while index < line.count, let digit = Hex.value(of: line[index]) {
            guard size <= (Int64.max - Int64(digit)) / 16 else {
                throw HTTPClientError(.invalidChunk, "a chunk size overflows")
            }
            size = size * 16 + Int64(digit)
            index += 1
        }
        guard index > 0 else {
            throw HTTPClientError(.invalidChunk, "malformed chunk size line '\(printable(line))'")
        }
        while index < line.count, line[index] == 0x20 || line[index] == 0x09 { index += 1 }
        guard index == line.count || line[index] == UInt8(ascii: ";") else {
            throw HTTPClientError(.invalidChunk, "malformed chunk size line '\(printable(line))'")
        }
        if line.contains(where: { ($0 < 0x20 && $0 != 0x09) || $0 == 0x7F }) {
            throw HTTPClientError(.invalidChunk, "a chunk size line contains a control character")
        }
        return size
    }
}
