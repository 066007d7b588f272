#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import HaulHTTP
import HaulService

/// `haul daemon`'s log: one line per event, as text on standard error or as a JSON object on
/// standard output (`--json`). URLs are redacted (userinfo, signatures, tokens); the RPC
/// secret is never written.
struct DaemonLog: Sendable {
    let terminal: any OutputSink
    let json: Bool

    /// A line about the daemon itself (`listening on ...`).
    func note(_ message: String) {
        if json {
            terminal.write(object([("event", "daemon"), ("message", message)]), to: .output)
        } else {
            terminal.write("haul daemon: \(message)\n", to: .error)
        }
    }

    /// The line about one download's event, and the stream it goes to.
    func line(_ event: ServiceEvent, _ download: ServiceDownload?) -> (String, StandardStream) {
        let url = download?.urls.first.map { redactedURLString($0) } ?? ""
        var detail = ""
        switch event.kind {
        case .completed: detail = download?.filePath ?? ""
        case .failed: detail = download?.failure?.message ?? ""
        default: break
        }
        if json {
            var fields: [(String, String)] = [("event", event.kind.rawValue), ("gid", event.id.hex)]
            if !url.isEmpty { fields.append(("url", url)) }
            if event.kind == .completed, !detail.isEmpty { fields.append(("file", detail)) }
            if event.kind == .failed, !detail.isEmpty { fields.append(("error", detail)) }
            return (object(fields), .output)
        }
        let suffix = detail.isEmpty ? "" : ": \(detail)"
        let line = "\(event.id.hex) \(event.kind.rawValue) \(url)\(suffix)"
        return ("haul daemon: \(HumanFormat.printable(line))\n", .error)
    }

    /// One JSON object per line, members in the given order.
    private func object(_ fields: [(String, String)]) -> String {
        JSONValue.object(fields.map { ($0.0, .string($0.1)) }).encoded + "\n"
    }
}
