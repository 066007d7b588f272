import HaulService
import HaulJSON

/// Haul's extensions for long lists: `haul.tellMatching` reads a page of the downloads a filter
/// finds, `haul.changeMatching` changes every one of them (or of a list of GIDs) in one call.
extension Aria2Methods {
    /// The longest filter text, in bytes.
    static let longestFilterText = 1_024
    /// The most GIDs one `haul.changeMatching` takes.
    static let mostSelectedGIDs = 100_000
    /// The most downloads one `haul.tellMatching` answers with.
    static let mostListed = 1_000

    /// `haul.tellMatching([secret,] filter, offset, num[, keys])`: `{"total", "downloads"}`, the
    /// downloads in the list's order (active, the queue, the results), at most ``mostListed``.
    static func tellMatching(_ call: inout Aria2Call) throws(RPCFault) -> JSONValue {
        let object = try call.parameter(0, required: true, \.object)!
        guard !object.contains("gids"), !object.contains("except") else {
            throw RPCFault.failure("haul.tellMatching takes a filter: text and state.")
        }
        let filter = try Self.filter(object)
        let offset = try call.integer(1), count = min(try call.integer(2), mostListed)
        guard offset >= 0 else { throw RPCFault.failure("The parameter offset must be zero or positive integer.") }
        guard count >= 0 else { throw RPCFault.failure("The parameter num must be zero or positive integer.") }
        let keys = try call.keys(3)
        let service = call.service
        let (total, downloads) = try call.read { () throws(ServiceError) in
            try service.matchingDownloads(filter) { size in offset >= size ? size..<size : offset..<(offset + min(count, size - offset)) }
        }
        return ["total": .string(String(total)), "downloads": .array(downloads.map { Aria2Status.json($0, keys: keys) })]
    }

    /// A filter from `{"text": TEXT, "state": all|active|waiting|paused|finished|failed}` (both optional).
    static func filter(_ object: JSONObject) throws(RPCFault) -> DownloadFilter {
        for member in object.members where !["text", "state", "gids", "except"].contains(member.key) {
            throw RPCFault.failure("The filter has an unknown key \(JSONWriter.encode(.string(member.key))).")
        }
        var filter = DownloadFilter()
        if let text = object["text"] {
            guard let text = text.string else { throw RPCFault.failure("The filter's text is not a string.") }
            guard !text.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F }) else {
                throw RPCFault.failure("The filter's text holds a control character.")
            }
            guard text.utf8.count <= longestFilterText else {
                throw RPCFault.failure("The filter's text is longer than \(longestFilterText) bytes.")
            }
            filter.text = text
        }
        if let state = object["state"] {
            guard let name = state.string, let statuses = DownloadFilter.statuses(named: name) else {
                throw RPCFault.failure("The filter's state is not one of all, active, waiting, paused, finished, failed.")
            }
            filter.statuses = statuses
        }
        return filter
    }
}

// MARK: - Changes

extension Aria2Methods {
    /// What `haul.changeMatching` does to each download.
    enum BulkAction: String {
        case pause, unpause, remove, moveToTop
    }

    /// `haul.changeMatching([secret,] action, selection)`: `action` is `pause`, `unpause`,
    /// `remove` or `moveToTop`; `selection` a filter (as `haul.tellMatching`, with `except`: GIDs
    /// left out) or `{"gids": [...]}`. `remove` takes a queued download and its result out of the
    /// list, forgets a result, and stops an active one (its result stays, as `aria2.remove`'s).
    /// Answers `{"changed", "unchanged"}`: a download the action does not apply to (pausing a
    /// paused one) is unchanged. The changes are durable when it answers.
    static func changeMatching(_ call: inout Aria2Call) throws(RPCFault) -> JSONValue {
        guard let action = BulkAction(rawValue: try call.string(0)) else {
            throw RPCFault.failure("The action is not one of pause, unpause, remove, moveToTop.")
        }
        let selection = try call.parameter(1, required: true, \.object)!
        let matches = try selected(selection, &call)
        var changed = 0
        for match in order(matches, for: action) where try apply(action, to: match, &call) { changed += 1 }
        return ["changed": .string(String(changed)), "unchanged": .string(String(matches.count - changed))]
    }

    /// The order to change them in. Each moved to the top goes to the front: the last first.
    /// Pausing and removing start no other: the queued ones first, so that the slots the active
    /// ones free start none of them; paused, the active ones go to the front, the last first.
    static func order(_ matches: [DownloadMatch], for action: BulkAction) -> [DownloadMatch] {
        switch action {
        case .moveToTop: return matches.reversed()
        case .pause: return matches.filter { $0.status != .active } + matches.filter { $0.status == .active }.reversed()
        // Removing an active one frees a slot: the queued ones go first, so that none starts.
        case .remove: return matches.filter { $0.status != .active } + matches.filter { $0.status == .active }
        case .unpause: return matches
        }
    }

    /// The downloads a selection names: the GIDs given (those not found left out), or a filter's.
    private static func selected(_ selection: JSONObject, _ call: inout Aria2Call) throws(RPCFault) -> [DownloadMatch] {
        let service = call.service
        guard let gids = selection["gids"] else {
            let filter = try filter(selection)
            let except = try identifiers(selection["except"] ?? [])
            return try call.read { () throws(ServiceError) in try service.matches(filter) }.filter { !except.contains($0.id) }
        }
        guard selection.members.count == 1 else { throw RPCFault.failure("The selection is a filter, or gids alone.") }
        var found: [DownloadMatch] = []
        for id in try identifiers(gids) {
            if let download = try call.read({ () throws(ServiceError) in try service.download(id) }) {
                found.append(DownloadMatch(id: id, status: download.status))
            }
        }
        return found
    }

    /// The GIDs of a list (whole ones: 16 hexadecimal digits each), in order, once each.
    private static func identifiers(_ list: JSONValue) throws(RPCFault) -> [DownloadID] {
        guard let list = list.array, list.count <= mostSelectedGIDs else {
            throw RPCFault.failure("A list of GIDs is an array of at most \(mostSelectedGIDs).")
        }
        var seen = Set<DownloadID>(), ids: [DownloadID] = []
        for text in list {
            guard let text = text.string, text.utf8.count == 16, let id = DownloadID(hex: text) else {
                throw RPCFault.failure("Invalid GID \(JSONWriter.encode(text))")
            }
            if seen.insert(id).inserted { ids.append(id) }
        }
        return ids
    }

    /// Applies `action` to one download; returns whether it changed.
    private static func apply(_ action: BulkAction, to match: DownloadMatch, _ call: inout Aria2Call) throws(RPCFault) -> Bool {
        let service = call.service, id = match.id
        do throws(ServiceError) {
            switch (action, match.status) {
            case (.pause, .active), (.pause, .waiting): call.note(try service.enqueuePause(id))
            case (.unpause, .paused): call.note(try service.enqueueResume(id))
            case (.remove, let status) where status.isStopped: call.note(try service.enqueueForgetResult(id))
            case (.remove, .active): call.note(try service.enqueueRemove(id))   // a result once its transfer stopped
            case (.remove, _):   // out of the queue, and its result forgotten: gone from the list
                call.note(try service.enqueueRemove(id))
                call.note(try service.enqueueForgetResult(id))
            case (.moveToTop, .waiting), (.moveToTop, .paused): _ = call.note(try service.enqueueMove(id, by: 0, from: .front))
            default: return false
            }
            return true
        } catch where error.code == .notFound || error.code == .invalidState {
            return false   // it changed meanwhile (ended, removed by another call)
        } catch {
            throw RPCFault.failure(error.message)
        }
    }
}
