#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Haul
import HaulJSON
import HaulService

/// `haul daemon`'s log: one line per event, as text on standard error or as a JSON object on
/// standard output (`--json`). URLs are redacted (userinfo, signatures, tokens); the RPC
/// secret is never written: its text is replaced by `REDACTED` wherever it appears in a line,
/// percent-encoded or not (a URL whose path or query holds it, an error message quoting one).
struct DaemonLog: Sendable {
    let terminal: any OutputSink
    let json: Bool
    /// The RPC secret, hidden in every line (`nil` until it is known).
    var secret: String? = nil

    /// A line about the daemon itself (`listening on ...`).
    func note(_ text: String) {
        let message = hidingSecret(text)
        if json {
            terminal.write(object([("event", "daemon"), ("message", message)]), to: .output)
        } else {
            terminal.write("haul daemon: \(message)\n", to: .error)
        }
    }

    /// The line about one download's event, and the stream it goes to.
    func line(_ event: ServiceEvent, _ download: ServiceDownload?) -> (String, StandardStream) {
        let url = hidingSecret(download?.urls.first.map { DownloadRequest.redactedURL($0) } ?? "")
        var detail = ""
        switch event.kind {
        case .completed: detail = download?.filePath ?? ""
        case .failed: detail = download?.failure?.message ?? ""
        default: break
        }
        detail = hidingSecret(detail)
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

    /// `text` with the secret's text replaced by `REDACTED`.
    private func hidingSecret(_ text: String) -> String {
        guard let secret else { return text }
        return DownloadRequest.hiding(secret, in: text)
    }

    /// One JSON object per line, members in the given order.
    private func object(_ fields: [(String, String)]) -> String {
        JSONWriter.text(.object(fields.map { ($0.0, JSONValue.string($0.1)) })) + "\n"
    }
}
