import Haul
import HaulCore
import HaulHTTP

/// Targets for the parsers of `Haul`'s engine.
enum EngineTargets {
    /// A `Content-Disposition` value: the file name chosen from it is always safe: one component
    /// ``ContainedPath`` accepts, and the path it makes in a folder stays below that folder.
    static func contentDisposition(_ data: UnsafeRawBufferPointer) {
        let value = String(decoding: data, as: UTF8.self)
        let name = FileNamer.name(contentDisposition: value, originalURLPath: "/files/a%2Fb.bin", contentType: "text/html")
        let bytes = Array(name.utf8)
        FuzzTargets.require(!bytes.isEmpty && bytes.count <= 248, "a name of \(bytes.count) bytes")
        FuzzTargets.require(name != "." && name != ".." && bytes.first != UInt8(ascii: "."), "a dot name: \(name)")
        FuzzTargets.require(!bytes.contains { $0 < 0x20 || $0 == 0x7F || $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "\\") },
                            "a separator or control character in \(Array(name.unicodeScalars))")
        FuzzTargets.require((try? ContainedPath.check(component: name)) != nil, "a refused component: \(Array(name.unicodeScalars))")
        FuzzTargets.require(name.unicodeScalars.first.map(ContainedPath.isDotLike) == false, "a leading dot leader: \(name)")
        FuzzTargets.require(PathTargets.lexicallyUnder("/root", "/root/" + name), "a name that leaves its folder: \(name)")
    }

    /// A server digest field (`Repr-Digest`, `Content-Digest`, `Digest`): parsing never fails.
    static func serverDigest(_ data: UnsafeRawBufferPointer) {
        let value = String(decoding: data, as: UTF8.self)
        for field in ["Repr-Digest", "Content-Digest", "Digest"] {
            _ = ServerDigest(status: 200, headers: HTTPHeaders([(name: field, value: value)]))
        }
    }

    /// A resume record: one that decodes is exactly what encoding it writes, and decodes again
    /// to the same record.
    static func resumeRecord(_ data: UnsafeRawBufferPointer) {
        guard case .success(let record) = ResumeRecord.decode(Array(data)) else { return }
        let encoded = record.encoded()
        FuzzTargets.require(encoded == Array(data), "a record decodes from text it does not write")
        FuzzTargets.require((try? ResumeRecord.decode(encoded).get()) == record, "a record does not decode to itself")
    }
}
