import Haul
import HaulService
import HaulJSON

// MARK: - What the list holds

extension Aria2Methods {
    /// The download a GID names, for the methods that take any status.
    static func download(_ call: Aria2Call, _ index: Int = 0) throws(RPCFault) -> ServiceDownload {
        let id = try call.gid(index)
        guard let download = try call.read({ () throws(ServiceError) in try call.service.download(id) }) else {
            throw RPCFault.failure("GID \(id.hex) is not found")
        }
        return download
    }

    static func tellStatus(_ call: inout Aria2Call) throws(RPCFault) -> JSONValue {
        let found = try download(call)
        let keys = try call.keys(1)
        let wants = { (key: String) in found.status == .active && (keys?.isEmpty != false || keys!.contains(key)) }
        return Aria2Status.json(found, keys: keys, segments: wants("segments") ? call.service.segmentsInFlight(found.id) : nil,
                                sources: wants("sources") || wants("files") ? call.service.sourcesInUse(found.id) : [])
    }

    static func tellActive(_ call: inout Aria2Call) throws(RPCFault) -> JSONValue {
        let keys = try call.keys(0)
        let active = try call.read { () throws(ServiceError) in try call.service.activeDownloads() }
        return .array(active.map { Aria2Status.json($0, keys: keys) })
    }

    static func tellList(_ call: inout Aria2Call, stopped: Bool) throws(RPCFault) -> JSONValue {
        let offset = try call.integer(0), count = try call.integer(1)
        guard count >= 0 else { throw RPCFault.failure("The parameter num must be zero or positive integer.") }
        let keys = try call.keys(2)
        var reversed = false
        let pick = { (size: Int) -> Range<Int> in
            let page = Aria2Pagination.page(offset: offset, count: count, size: size)
            reversed = page.reversed
            return page.range
        }
        let service = call.service
        let downloads = try call.read { () throws(ServiceError) in
            stopped ? try service.stoppedDownloads(pick) : try service.waitingDownloads(pick)
        }
        let entries = downloads.map { Aria2Status.json($0, keys: keys) }
        return .array(reversed ? entries.reversed() : entries)
    }

    static func getURIs(_ call: inout Aria2Call) throws(RPCFault) -> JSONValue {
        let found = try download(call)
        guard !found.status.isStopped else { throw RPCFault.failure("No URI data is available for GID#\(found.id.hex)") }
        return Aria2Status.uris(found, sources: call.service.sourcesInUse(found.id))
    }

    static func getFiles(_ call: inout Aria2Call) throws(RPCFault) -> JSONValue {
        Aria2Status.files(try download(call))
    }

    static func getPeers(_ call: inout Aria2Call) throws(RPCFault) -> JSONValue {
        let found = try download(call)
        guard !found.status.isStopped else { throw RPCFault.failure("No peer data is available for GID#\(found.id.hex)") }
        return []   // HTTP downloads have no peers
    }

    static func getServers(_ call: inout Aria2Call) throws(RPCFault) -> JSONValue {
        let found = try download(call)
        guard found.status == .active, let url = found.urls.first else {
            throw RPCFault.failure("No active download for GID#\(found.id.hex)")
        }
        let sources = call.service.sourcesInUse(found.id).filter { $0.connections > 0 }
        guard !sources.isEmpty else {
            let server: JSONValue = ["currentUri": .string(url), "downloadSpeed": .string(String(Int64(found.bytesPerSecond))),
                                     "uri": .string(url)]
            return [["index": "1", "servers": [server]]]
        }
        // One entry per connection, as aria2 lists them: the URL as given, and its server's share of the speed.
        let servers: [JSONValue] = sources.flatMap { source -> [JSONValue] in
            let given = source.requestIndex.flatMap { found.urls.indices.contains($0) ? found.urls[$0] : nil } ?? source.url
            let speed = String(Int64(source.bytesPerSecondPerConnection ?? 0))
            return Array(repeating: ["currentUri": .string(given), "downloadSpeed": .string(speed), "uri": .string(given)],
                         count: source.connections)
        }
        return [["index": "1", "servers": .array(servers)]]
    }

    static func getGlobalStat(_ call: inout Aria2Call) throws(RPCFault) -> JSONValue {
        let stats = try call.read { () throws(ServiceError) in try call.service.currentStatistics() }
        return [
            "downloadSpeed": .string(String(Int64(stats.bytesPerSecond))),
            "numActive": .string(String(stats.active)),
            "numStopped": .string(String(stats.stopped)),
            "numStoppedTotal": .string(String(stats.stoppedTotal)),
            "numWaiting": .string(String(stats.waiting)),
            "uploadSpeed": "0",
        ]
    }

    /// Haul's `haul.getNodes`: a line per node of the fleet (none for one daemon on its state file).
    static func getNodes(_ call: inout Aria2Call) throws(RPCFault) -> JSONValue {
        .array(try call.read { () throws(ServiceError) in try call.service.fleetNodes() }.map { node in
            [
                "node": .string(node.name), "address": .string(node.address), "numActive": .string(String(node.active)),
                "downloadSpeed": .string(String(node.bytesPerSecond)),
                "secondsSinceRenewal": .string(String(Int64(node.secondsSinceRenewal.rounded()))),
            ]
        })
    }

    static func getVersion(_ call: inout Aria2Call) throws(RPCFault) -> JSONValue {
        ["enabledFeatures": ["HTTPS", "Message Digest"], "version": .string(HaulInfo.version)]
    }
}

// MARK: - Options

extension Aria2Methods {
    static func getOption(_ call: inout Aria2Call) throws(RPCFault) -> JSONValue {
        Aria2Options.json(try download(call), defaults: call.rpc.defaults)
    }

    static func changeOption(_ call: inout Aria2Call) throws(RPCFault) -> JSONValue {
        let found = try download(call)
        guard let changes = try call.parameter(1, required: true, \.object) else { return "OK" }
        guard !found.status.isStopped else { throw RPCFault.failure("Cannot change option for GID#\(found.id.hex)") }
        var options = found.options
        _ = try Aria2Options.apply(changes, to: &options)   // `pause` and `gid` mean nothing here
        let service = call.service, id = found.id, final = options
        try call.change { () throws(ServiceError) in try service.enqueueChangeOptions(id, to: final) }
        return "OK"
    }

    static func getGlobalOption(_ call: inout Aria2Call) throws(RPCFault) -> JSONValue {
        let defaults = call.rpc.defaults, service = call.service
        let connections = JSONValue.string(String(defaults.connections))
        let options: JSONValue = [
            "allow-overwrite": "false",
            "continue": "true",
            "dir": .string(service.rootPath),
            "max-concurrent-downloads": .string(String(service.maximumActiveDownloads)),
            "max-connection-per-server": connections,
            "max-download-limit": .string(String(defaults.downloadLimit ?? 0)),
            "max-overall-download-limit": .string(String(service.rateLimit ?? 0)),
            "rpc-listen-port": .string(String(call.rpc.listen.port)),
            "split": connections,
        ]
        return .object(JSONObject((options.object?.members ?? []) + limitSchedule(call.rpc.limits)))
    }

    /// Haul's keys of `getGlobalOption` for the rate by the clock: the schedule, the rate outside
    /// its windows, and the next change (local time with its offset) and the rate from then on,
    /// both `""` when none comes within a week.
    static func limitSchedule(_ limits: RateScheduler) -> [JSONObject.Member] {
        let status = limits.status()
        return [
            .init("haul-limit-next-change", .string(status.nextChange.map { limits.zone.timestamp($0) } ?? "")),
            .init("haul-limit-next-rate", .string(status.nextChange == nil ? "" : String(status.nextRate ?? 0))),
            .init("haul-limit-rate", .string(String(status.outside ?? 0))),
            .init("haul-limit-schedule", .string(status.schedule.description)),
        ]
    }

    static func changeGlobalOption(_ call: inout Aria2Call) throws(RPCFault) -> JSONValue {
        let changes = try call.parameter(0, required: true, \.object)!
        var defaults = call.rpc.defaults
        let global = try Aria2Options.applyGlobal(changes, to: &defaults)
        // The one change that can fail (a fleet's database out of reach) first: then nothing else is made.
        if let maximumActive = global.maximumActive {
            do throws(ServiceError) {
                try call.service.setMaximumActiveDownloads(maximumActive)
            } catch {
                throw RPCFault.failure(error.message)
            }
        }
        call.rpc.setDefaults(defaults)
        // The schedule first: a rate given with it holds until the new schedule's next change.
        if let schedule = global.schedule { call.rpc.limits.setSchedule(schedule) }
        if let overall = global.overallLimit { call.rpc.limits.setRate(overall) }
        return "OK"
    }
}
