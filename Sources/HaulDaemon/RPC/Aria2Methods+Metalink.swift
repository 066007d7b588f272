import Haul
import HaulCore
import HaulJSON
import HaulMetalink
import HaulService

extension Aria2Methods {
    /// `aria2.addMetalink(metalink, options, position)`: a base64 Metalink 4 document; one
    /// download per file, from its URLs by priority, into `dir` and the folders of its name,
    /// checked against its strongest hash (its piece hashes are not kept by the service yet).
    /// Returns the GIDs in the document's order.
    static func addMetalink(_ call: inout Aria2Call) throws(RPCFault) -> JSONValue {
        let text = try call.string(0)
        guard let bytes = Base64.decode(text.utf8) else { throw RPCFault.failure("The metalink is not base64.") }
        let document: Metalink
        do throws(MetalinkError) {
            document = try Metalink.parse(bytes)
        } catch {
            throw RPCFault.failure("The metalink is not usable: \(error.message)")
        }
        var base = ServiceDownloadOptions()
        base.connections = call.rpc.defaults.connections
        base.rateLimit = call.rpc.defaults.downloadLimit
        let extras = try call.object(1).map { (object) throws(RPCFault) in try Aria2Options.apply(object, to: &base) }
            ?? Aria2Options.Extras()
        let position = try call.parameter(2, required: false, \.integer)
        if let position, position < 0 { throw RPCFault.failure("Position must be greater than or equal to 0.") }
        var gids: [JSONValue] = []
        for (offset, file) in document.files.enumerated() {
            let request = ServiceRequest(urls: file.urls.map(\.url), options: options(for: file, base: base),
                                         position: position.map { Int(clamping: $0) + offset }, paused: extras.paused)
            let service = call.service
            let id = try call.change { () throws(ServiceError) in try service.enqueueAdd(request) }
            gids.append(.string(id.hex))
        }
        return .array(gids)
    }

    /// The options of one file of a document: its folders below `dir`, its name, its hash and
    /// its pieces' hashes.
    private static func options(for file: Metalink.File, base: ServiceDownloadOptions) -> ServiceDownloadOptions {
        var options = base
        // By bytes: a `/` followed by a combining mark is one Character and still a separator.
        let parts = file.name.utf8.split(separator: UInt8(ascii: "/")).map { String(decoding: $0, as: UTF8.self) }
        options.directory = ([base.directory].filter { !$0.isEmpty } + parts.dropLast()).joined(separator: "/")
        options.fileName = parts.last
        if let hash = file.hash { options.checksum = try? Checksum(algorithm: hash.algorithm, expected: hash.digest) }
        options.pieces = file.pieces.flatMap { try? PieceChecksums(length: $0.length, algorithm: $0.algorithm, digests: $0.digests) }
        return options
    }
}
