#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import HaulDaemon
import HaulJSON

/// `haul add|ls|pause|resume|rm`: one call per item to a running daemon.
///
/// Exit status: 0 when every item succeeded; 1 when the daemon refused one (the lowest non-zero
/// status wins); 4 when the daemon cannot be reached; 6 when it refused the secret.
struct ClientCommand {
    let options: ClientOptions
    let terminal: any Terminal

    func run() -> Int32 {
        let client: DaemonClient
        do throws(UsageError) {
            client = try makeClient()
        } catch {
            HaulCommand.printUsageError(error, to: terminal)
            return ExitStatus.usage
        }
        switch options.action {
        case .list: return list(client)
        case .add: return each(options.operands) { (url) throws(DaemonClientError) in try add(url, client) }
        case .pause: return each(options.operands) { (id) throws(DaemonClientError) in try client.call("aria2.pause", [.string(id)]).string ?? id }
        case .resume: return each(options.operands) { (id) throws(DaemonClientError) in try client.call("aria2.unpause", [.string(id)]).string ?? id }
        case .remove: return each(options.operands) { (id) throws(DaemonClientError) in try remove(id, client) }
        }
    }

    private func makeClient() throws(UsageError) -> DaemonClient {
        var secret: String?
        if let file = options.secretFile {
            secret = try DaemonPaths.readSecret(file)
        } else {
            let path = DaemonPaths.secretFile(besides: DaemonPaths.defaultStateFile(terminal.environment))
            if FileManager.default.fileExists(atPath: path) { secret = try DaemonPaths.readSecret(path) }
        }
        guard let client = DaemonClient(url: options.rpc, secret: secret) else {
            throw UsageError("invalid value '\(options.rpc)' for --rpc: expected http://HOST:PORT/jsonrpc")
        }
        return client
    }

    /// Runs `body` for each item, printing what it returns; the exit status of the worst failure.
    private func each(_ items: [String], _ body: (String) throws(DaemonClientError) -> String) -> Int32 {
        var statuses: [Int32] = []
        for item in items {
            do throws(DaemonClientError) {
                terminal.write(try body(item) + "\n", to: .output)
                statuses.append(ExitStatus.success)
            } catch {
                statuses.append(report(error, item))
                if case .unreachable = error.kind { break }
            }
        }
        return ExitStatus.combined(statuses)
    }

    private func report(_ error: DaemonClientError, _ item: String?) -> Int32 {
        let prefix = item.map { "\(HumanFormat.printable($0)): " } ?? ""
        terminal.write("haul: \(prefix)\(HumanFormat.printable(error.message))\n", to: .error)
        switch error.kind {
        case .unreachable: return 4
        case .protocolError: return 7
        case .rpc where error.message == "Unauthorized": return 6
        case .rpc: return ExitStatus.failure
        }
    }

    private func add(_ url: String, _ client: DaemonClient) throws(DaemonClientError) -> String {
        var object = JSONObject()
        if let directory = options.directory { object.append("dir", .string(directory)) }
        if let output = options.output { object.append("out", .string(output)) }
        return try client.call("aria2.addUri", [[.string(url)], .object(object)]).string ?? ""
    }

    /// A queued download is removed; a result is forgotten.
    private func remove(_ id: String, _ client: DaemonClient) throws(DaemonClientError) -> String {
        let status = try client.call("aria2.tellStatus", [.string(id), ["status"]]).object?["status"]?.string
        if status == "complete" || status == "error" || status == "removed" {
            _ = try client.call("aria2.removeDownloadResult", [.string(id)])
            return id
        }
        return try client.call("aria2.remove", [.string(id)]).string ?? id
    }

    /// Every download: active, then the queue, then the results, as a table.
    private func list(_ client: DaemonClient) -> Int32 {
        let keys: JSONValue = ["gid", "status", "totalLength", "completedLength", "downloadSpeed", "files"]
        var rows: [JSONValue] = []
        do throws(DaemonClientError) {
            rows += try client.call("aria2.tellActive", [keys]).array ?? []
            for method in ["aria2.tellWaiting", "aria2.tellStopped"] {
                var offset = 0
                while true {
                    let page = try client.call(method, [.integer(offset), 1000, keys]).array ?? []
                    rows += page
                    offset += page.count
                    if page.count < 1000 { break }
                }
            }
        } catch {
            return report(error, nil)
        }
        terminal.write("GID               STATUS    PROGRESS        SPEED  NAME\n", to: .output)
        for row in rows.compactMap({ $0.object }) { terminal.write(line(row), to: .output) }
        return ExitStatus.success
    }

    private func line(_ row: JSONObject) -> String {
        let total = Int64(row["totalLength"]?.string ?? "") ?? 0
        let done = Int64(row["completedLength"]?.string ?? "") ?? 0
        let speed = Double(row["downloadSpeed"]?.string ?? "") ?? 0
        let file = row["files"]?.array?.first?.object
        let path = file?["path"]?.string ?? ""
        let name = path.isEmpty ? (file?["uris"]?.array?.first?.object?["uri"]?.string ?? "") : URL(fileURLWithPath: path).lastPathComponent
        let progress = total > 0 ? "\(done * 100 / total)% of \(HumanFormat.bytes(total))" : HumanFormat.bytes(done)
        func padded(_ text: String, _ width: Int) -> String { text.count >= width ? text : text + String(repeating: " ", count: width - text.count) }
        let gid = row["gid"]?.string ?? ""
        let status = row["status"]?.string ?? ""
        let speedText = speed > 0 ? HumanFormat.speed(speed) : "-"
        return padded(gid, 18) + padded(status, 10) + padded(progress, 16)
            + String(repeating: " ", count: max(0, 5 - speedText.count)) + speedText + "  " + HumanFormat.printable(name) + "\n"
    }
}
