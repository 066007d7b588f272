import Haul
import HaulService
import HaulJSON

/// One aria2 method: its name, whether it takes the token, and what it does.
struct Aria2Method: Sendable {
    /// The method name (`aria2.addUri`).
    let name: String
    /// `false` for the methods aria2 answers without a token (`system.listMethods`,
    /// `system.listNotifications`) and for `system.multicall`, whose calls carry their own.
    let takesToken: Bool
    /// Runs the call.
    let run: @Sendable (inout Aria2Call) throws(RPCFault) -> JSONValue

    init(_ name: String, takesToken: Bool = true, _ run: @escaping @Sendable (inout Aria2Call) throws(RPCFault) -> JSONValue) {
        self.name = name
        self.takesToken = takesToken
        self.run = run
    }
}

/// The aria2 methods, as data: the table the dispatcher looks names up in.
enum Aria2Methods {
    static let table: [Aria2Method] = [
        Aria2Method("aria2.addUri", addURI),
        Aria2Method("aria2.addMetalink", addMetalink),
        Aria2Method("aria2.remove", remove),
        Aria2Method("aria2.forceRemove", remove),
        Aria2Method("aria2.pause", pause),
        Aria2Method("aria2.pauseAll", pauseAll),
        Aria2Method("aria2.forcePause", pause),
        Aria2Method("aria2.forcePauseAll", pauseAll),
        Aria2Method("aria2.unpause", unpause),
        Aria2Method("aria2.unpauseAll", unpauseAll),
        Aria2Method("aria2.tellStatus", tellStatus),
        Aria2Method("aria2.getUris", getURIs),
        Aria2Method("aria2.getFiles", getFiles),
        Aria2Method("aria2.getPeers", getPeers),
        Aria2Method("aria2.getServers", getServers),
        Aria2Method("aria2.tellActive", tellActive),
        Aria2Method("aria2.tellWaiting", { call throws(RPCFault) in try tellList(&call, stopped: false) }),
        Aria2Method("aria2.tellStopped", { call throws(RPCFault) in try tellList(&call, stopped: true) }),
        Aria2Method("aria2.changePosition", changePosition),
        Aria2Method("aria2.getOption", getOption),
        Aria2Method("aria2.changeUri", changeURI),
        Aria2Method("aria2.changeOption", changeOption),
        Aria2Method("aria2.getGlobalOption", getGlobalOption),
        Aria2Method("aria2.changeGlobalOption", changeGlobalOption),
        Aria2Method("aria2.purgeDownloadResult", purgeResults),
        Aria2Method("aria2.removeDownloadResult", removeResult),
        Aria2Method("aria2.getVersion", getVersion),
        Aria2Method("aria2.getSessionInfo", { call in ["sessionId": .string(call.rpc.sessionID)] }),
        Aria2Method("aria2.shutdown", { call in call.rpc.requestShutdown(force: false) }),
        Aria2Method("aria2.forceShutdown", { call in call.rpc.requestShutdown(force: true) }),
        Aria2Method("aria2.getGlobalStat", getGlobalStat),
        Aria2Method("aria2.saveSession", { _ in "OK" }),   // the list is always saved
        Aria2Method("haul.getNodes", getNodes),   // Haul's extensions: the fleet's nodes, and long lists filtered
        Aria2Method("haul.tellMatching", tellMatching),
        Aria2Method("haul.changeMatching", changeMatching),
        Aria2Method("system.multicall", takesToken: false, { call throws(RPCFault) in try call.rpc.multicall(&call) }),
        Aria2Method("system.listMethods", takesToken: false, { _ in .array(table.map { .string($0.name) }) }),
        Aria2Method("system.listNotifications", takesToken: false, { _ in .array(RPCNotification.names.map { .string($0) }) }),
    ]

    /// The table by name.
    static let byName: [String: Aria2Method] = Dictionary(uniqueKeysWithValues: table.map { ($0.name, $0) })

    // MARK: The queue

    static func addURI(_ call: inout Aria2Call) throws(RPCFault) -> JSONValue {
        let list = try call.parameter(0, required: true, \.array)!
        let urls = list.compactMap(\.string)
        guard !urls.isEmpty else { throw RPCFault.failure("URI is not provided.") }
        var options = ServiceDownloadOptions()
        let defaults = call.rpc.defaults
        options.connections = defaults.connections
        options.rateLimit = defaults.downloadLimit
        let extras = try call.object(1).map { (object) throws(RPCFault) in try Aria2Options.apply(object, to: &options) }
            ?? Aria2Options.Extras()
        let position = try call.parameter(2, required: false, \.integer)
        if let position, position < 0 { throw RPCFault.failure("Position must be greater than or equal to 0.") }
        let request = ServiceRequest(urls: urls, options: options, position: position.map { Int(clamping: $0) },
                                     paused: extras.paused, id: extras.id)
        let service = call.service
        let id = try call.change { () throws(ServiceError) in try service.enqueueAdd(request) }
        return .string(id.hex)
    }

    static func remove(_ call: inout Aria2Call) throws(RPCFault) -> JSONValue {
        let id = try call.gid(0), service = call.service
        try call.change { () throws(ServiceError) in try service.enqueueRemove(id) }
        return .string(id.hex)
    }

    static func pause(_ call: inout Aria2Call) throws(RPCFault) -> JSONValue {
        let id = try call.gid(0), service = call.service
        try call.change { () throws(ServiceError) in try service.enqueuePause(id) }
        return .string(id.hex)
    }

    static func pauseAll(_ call: inout Aria2Call) throws(RPCFault) -> JSONValue {
        let service = call.service
        try call.change { () throws(ServiceError) in try service.enqueuePauseAll() }
        return "OK"
    }

    static func unpause(_ call: inout Aria2Call) throws(RPCFault) -> JSONValue {
        let id = try call.gid(0), service = call.service
        try call.change { () throws(ServiceError) in try service.enqueueResume(id) }
        return .string(id.hex)
    }

    static func unpauseAll(_ call: inout Aria2Call) throws(RPCFault) -> JSONValue {
        let service = call.service
        try call.change { () throws(ServiceError) in try service.enqueueResumeAll() }
        return "OK"
    }

    static func removeResult(_ call: inout Aria2Call) throws(RPCFault) -> JSONValue {
        let id = try call.gid(0), service = call.service
        try call.change { () throws(ServiceError) in try service.enqueueForgetResult(id) }
        return "OK"
    }

    static func purgeResults(_ call: inout Aria2Call) throws(RPCFault) -> JSONValue {
        let service = call.service
        try call.change { () throws(ServiceError) in try service.enqueueForgetResults() }
        return "OK"
    }

    static func changeURI(_ call: inout Aria2Call) throws(RPCFault) -> JSONValue {
        let id = try call.gid(0)
        let index = try call.integer(1)
        guard index >= 1 else { throw RPCFault.failure("The parameter at 1 has wrong type.") }
        let removed = try call.parameter(2, required: true, \.array)!.compactMap(\.string)
        let added = try call.parameter(3, required: true, \.array)!.compactMap(\.string)
        let position = try call.parameter(4, required: false, \.integer)
        if let position, position < 0 { throw RPCFault.failure("Position must be greater than or equal to 0.") }
        guard let download = try call.read({ () throws(ServiceError) in try call.service.download(id) }), !download.status.isStopped else {
            throw RPCFault.failure("Cannot remove URIs from GID#\(id.hex)")
        }
        guard index == 1 else { throw RPCFault.failure("fileIndex is out of range") }
        var urls = download.urls
        var deleted = 0
        for url in removed {
            if let found = urls.firstIndex(of: url) {
                urls.remove(at: found)
                deleted += 1
            }
        }
        var at = min(Int(clamping: position ?? Int64(urls.count)), urls.count)
        for url in added {
            urls.insert(url, at: at)
            at += 1
        }
        let service = call.service, final = urls
        try call.change { () throws(ServiceError) in try service.enqueueChangeURLs(id, to: final) }
        return [.integer(deleted), .integer(added.count)]
    }

    static func changePosition(_ call: inout Aria2Call) throws(RPCFault) -> JSONValue {
        let id = try call.gid(0)
        let offset = try call.integer(1)
        let origin: DownloadService.QueueOrigin
        switch try call.string(2) {
        case "POS_SET": origin = .front
        case "POS_CUR": origin = .current
        case "POS_END": origin = .back
        default: throw RPCFault.failure("Illegal argument.")
        }
        let service = call.service
        let place = try call.change { () throws(ServiceError) in try service.enqueueMove(id, by: offset, from: origin) }
        return .integer(place)
    }
}
