import Foundation
import Haul
import HaulDaemon
import HaulService
import HaulJSON

/// Targets for the parsers of `haul daemon`: its HTTP request heads, WebSocket frames, JSON and
/// JSON-RPC requests.
enum DaemonTargets {
    /// An HTTP request head, fed in pieces whose sizes the input's first byte picks: each step is
    /// a head (which took no more bytes than it was given), a wish for more, or an error; a head
    /// has a method made of token bytes and a target without spaces or control bytes.
    static func requestHead(_ data: UnsafeRawBufferPointer) {
        let parser = HTTPRequestParser()
        let pieceSize = Int(data.first ?? 0) % 64 + 1
        var received: [UInt8] = []
        var start = 0
        while start < data.count {
            received += data[start..<min(data.count, start + pieceSize)]
            start += pieceSize
            guard let step = try? parser.parse(received) else { return }
            guard case .head(let head, let consumed) = step else { continue }
            FuzzTargets.require(consumed > 0 && consumed <= received.count, "a head of \(consumed) bytes from \(received.count)")
            FuzzTargets.require(!head.method.isEmpty && head.method.utf8.allSatisfy(HTTPRequestParser.isTokenByte),
                                "a method with a byte outside a token: \(Array(head.method.utf8))")
            FuzzTargets.require(!head.target.utf8.contains { $0 <= 0x20 || $0 == 0x7F }, "a target with a space or control byte")
            _ = try? HTTPRequestParser.contentLength(head)
            return
        }
    }

    /// WebSocket frames from a client, fed in pieces: a text message is valid UTF-8 (the parser
    /// refuses other text), no message is longer than the limit, and after a close or an error
    /// nothing more comes out.
    static func webSocketFrames(_ data: UnsafeRawBufferPointer) {
        var parser = WebSocketFrameParser(maximumMessageBytes: 4096)
        let pieceSize = Int(data.first ?? 0) % 32 + 1
        var start = 0
        var ended = false
        while start < data.count {
            let piece = data[start..<min(data.count, start + pieceSize)]
            start += pieceSize
            let messages: [WebSocketMessage]
            do throws(WebSocketError) {
                messages = try parser.feed(piece)
            } catch {
                FuzzTargets.require(!ended, "an error after the end")
                ended = true
                continue
            }
            FuzzTargets.require(!ended || messages.isEmpty, "a message after a close or an error")
            for message in messages {
                if case .close = message { ended = true }
                if case .text(let text) = message {
                    FuzzTargets.require(text.utf8.count <= 4096, "a text message of \(text.utf8.count) bytes")
                }
            }
        }
    }

    /// JSON: a value that parses prints as text that parses again to the same value.
    static func json(_ data: UnsafeRawBufferPointer) {
        guard let value = try? JSONParser().parse(data) else { return }
        let printed = JSONWriter.encode(value)
        guard let again = try? JSONParser().parse(printed) else {
            FuzzTargets.require(false, "'\(String(decoding: printed, as: UTF8.self))' (printed from a parsed value) does not parse")
            return
        }
        FuzzTargets.require(again == value, "a value changes when printed and parsed again")
    }

    /// A JSON-RPC body handled by the daemon's RPC over a real service in a scratch folder: the
    /// answer is JSON, its status one of aria2's, and the secret never appears in it unless the
    /// request carried it. Downloads the calls add go through a proxy at 127.0.0.1:1, which
    /// refuses: nothing leaves this machine.
    static func rpcRequest(_ data: UnsafeRawBufferPointer) {
        let rpc = RPCFixture.shared.rpc
        let reply = rpc.handle(Array(data))
        FuzzTargets.require([200, 400, 404, 500].contains(reply.status), "status \(reply.status)")
        FuzzTargets.require((try? JSONParser().parse(reply.body)) != nil, "an answer that is not JSON")
        let secret = Array(RPCFixture.secret.utf8)
        if !Array(data).contains(secret) {
            FuzzTargets.require(!reply.body.contains(secret), "the secret in an answer to a request without it")
        }
    }
}

extension DaemonTargets {
    /// A `--limit-schedule` (`haul-limit-schedule`) text: refused with a message that holds no
    /// control character (the caller's text is quoted escaped), or read as windows of the week
    /// whose written form reads back as the same schedule, and whose next change at an instant
    /// comes after it and is a change.
    static func limitSchedule(_ data: UnsafeRawBufferPointer) {
        let schedule: LimitSchedule
        do throws(LimitSchedule.ParseError) {
            schedule = try LimitSchedule(parsing: String(decoding: data, as: UTF8.self))
        } catch {
            FuzzTargets.require(!error.description.unicodeScalars.contains { $0.properties.generalCategory == .control },
                                "a control character in the message '\(error.description.debugDescription)'")
            return
        }
        for entry in schedule.entries {
            FuzzTargets.require((0..<1440).contains(entry.start) && (1...1440).contains(entry.end) && entry.start != entry.end
                                && entry.days.rawValue != 0, "an entry that is no window: \(entry)")
        }
        FuzzTargets.require((try? LimitSchedule(parsing: schedule.description)) == schedule, "'\(schedule)' does not read back")
        let instant = Int64(data.count) * 7_919 + 1_700_000_000
        let zone = FixedTimeZone(secondsEastOfUTC: 3600)
        let decision = schedule.decision(at: instant, outside: 1, in: zone)
        if let next = decision.nextChange {
            FuzzTargets.require(next > instant && schedule.decision(at: next, outside: 1, in: zone).rate != decision.rate,
                                "'\(schedule)' at \(instant): a next change at \(next) that changes nothing")
        }
    }
}

/// The service and RPC the `rpc-request` target drives: made once per process, in a folder of
/// its own under the temporary folder.
final class RPCFixture: Sendable {
    static let secret = "fuzz-secret-4b1d"
    static let shared = RPCFixture()
    /// The scratch folder, removed when the process exits.
    static let folder = FileManager.default.temporaryDirectory.appendingPathComponent("haul-fuzz-rpc-\(getpid())")

    let rpc: Aria2RPC

    private init() {
        let folder = Self.folder
        try? FileManager.default.removeItem(at: folder)
        atexit { try? FileManager.default.removeItem(at: RPCFixture.folder) }
        var engine = Downloader.Configuration()
        engine.proxy = .url("http://127.0.0.1:1", noProxy: [])
        engine.retry = RetryPolicy(maximumRetries: 0)
        let configuration = DownloadService.Configuration(root: folder.appendingPathComponent("root"),
                                                          stateFile: folder.appendingPathComponent("state.db"),
                                                          downloader: engine)
        let listen = ListenAddress(host: "127.0.0.1", port: 6800)
        guard let service = try? DownloadService(configuration: configuration) else {
            fatalError("the fuzz fixture's service could not start in \(folder.path)")
        }
        rpc = Aria2RPC(service: service, settings: .init(secret: Self.secret, listen: listen, connections: 1)) { _ in }
    }
}

extension Array where Element == UInt8 {
    /// Whether `part` occurs in these bytes.
    fileprivate func contains(_ part: [UInt8]) -> Bool {
        guard !part.isEmpty, part.count <= count else { return part.isEmpty }
        return (0...(count - part.count)).contains { self[$0..<($0 + part.count)].elementsEqual(part) }
    }
}
