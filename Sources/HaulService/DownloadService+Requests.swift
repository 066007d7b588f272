#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Haul
import HaulCore

// MARK: - Requests for the engine

extension DownloadService {
    /// A new entry for `request`, its options checked (the identifier is filled in later).
    func newEntry(_ request: ServiceRequest) throws(ServiceError) -> ServiceQueue.Entry {
        guard let first = request.urls.first else { throw ServiceError(.invalidArgument, "URI is not provided.") }
        for url in request.urls {
            guard let parsed = URL(string: url), let scheme = parsed.scheme?.lowercased(), scheme == "http" || scheme == "https",
                  parsed.host?.isEmpty == false, !url.contains(where: { $0 == "\n" || $0 == "\r" }) else {
                throw ServiceError(.invalidArgument, "No URI to download: '\(first.prefix(200))' is not an http(s) URL")
            }
        }
        let options = try checkOptions(request.options)
        return ServiceQueue.Entry(id: request.id ?? DownloadID(rawValue: 1)!, urls: request.urls, options: options,
                                  status: request.paused ? .paused : .waiting, position: 0)
    }

    /// The options with their folder in canonical form, or why they are refused.
    func checkOptions(_ options: ServiceDownloadOptions) throws(ServiceError) -> ServiceDownloadOptions {
        var checked = options
        checked.directory = try root.relativeFolder(options.directory)
        if let name = options.fileName { try root.checkFileName(name) }
        if let connections = options.connections, !(1...16).contains(connections) {
            throw ServiceError(.invalidArgument, "connections must be 1 to 16, not \(connections)")
        }
        if let rate = options.rateLimit, rate < 1 {
            throw ServiceError(.invalidArgument, "a rate limit must be at least 1 byte per second")
        }
        for header in options.headers {
            let token = header.name.unicodeScalars.allSatisfy {
                $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "!#$%&'*+-.^_`|~".unicodeScalars.contains($0))
            }
            guard token, !header.name.isEmpty,
                  header.value.unicodeScalars.allSatisfy({ $0 == "\t" || ($0.value >= 0x20 && $0.value != 0x7F) }) else {
                throw ServiceError(.invalidArgument, "invalid header '\(header.name)'")
            }
        }
        return checked
    }

    /// The engine's request and destination for a run of `entry`: its folder is opened below the
    /// root by the engine, component by component without following links (checked here too, to
    /// fail before any network I/O: a link may have appeared since it was added).
    ///
    /// Looks at the file system, so it runs on the service's thread with its lock released: a
    /// slow mount holds up the engine work queued behind it (in the order decided), never a
    /// caller or a query.
    func runPlan(_ entry: ServiceQueue.Entry) throws(ServiceError) -> (DownloadRequest, Destination) {
        guard let url = entry.urls.first.flatMap(URL.init(string:)) else {
            throw ServiceError(.invalidArgument, "the download has no usable URL")
        }
        try root.checkNoLinks(entry.options.directory, shown: entry.options.directory)
        var request = DownloadRequest(url: url, headers: entry.options.headers.map { ($0.name, $0.value) },
                                      conflictPolicy: entry.options.overwrite ? .overwrite : .rename, key: entry.id.hex,
                                      checksum: entry.options.checksum)
        // aria2's `split` is spread over the sources; each server gets at least one connection.
        let mirrors = entry.urls.dropFirst().compactMap(URL.init(string:))
        request.mirrors = mirrors.map { DownloadSource(url: $0) }
        request.connections = entry.options.connections.map { max(1, ($0 + mirrors.count) / (mirrors.count + 1)) }
        request.rateLimit = entry.options.rateLimit
        request.pieces = entry.options.pieces
        if let gate = configuration.commitGate {
            let id = entry.id
            request.commitGate = { gate(id) }
        }
        let folder = entry.options.directory
        if let file = entry.file {
            // The name an earlier run chose, in the same folder (the folder of a file that has its place stays).
            let name = String(decoding: file.utf8.split(separator: UInt8(ascii: "/")).last ?? [], as: UTF8.self)
            try root.checkFileName(name)
            return (request, .contained(root: root.url, folder: folder, name: name))
        }
        request.startOver = !entry.options.continues
        guard let name = entry.options.fileName else {
            return (request, .contained(root: root.url, folder: folder, name: nil))
        }
        if !entry.options.overwrite, root.contains(name, inFolder: folder) {
            throw ServiceError(.invalidState, "the file \(root.absolute(folder) + "/" + name) exists (allow-overwrite is false)")
        }
        return (request, .contained(root: root.url, folder: folder, name: name))
    }
}
