import Foundation

/// The setting of the symlink tests: a download folder `root/dl` and, outside it, a file
/// `root/victim.txt` that links planted in the folder point at. A download must never write
/// through such a link: ``isUntouched`` stays true and `root` holds only `dl` and `victim.txt`.
public struct OutsideFile {
    /// The download folder, `root/dl`.
    public let folder: URL
    /// The file outside it, `root/victim.txt`.
    public let victim: URL
    /// What the outside file holds.
    public static let content = Data("victim\n".utf8)

    /// Makes the folder and the outside file under `root`.
    public init(in root: URL) throws {
        folder = root.appendingPathComponent("dl")
        victim = root.appendingPathComponent("victim.txt")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: false)
        try Self.content.write(to: victim)
    }

    /// Plants `folder/name` as a symlink to the outside file and returns its URL.
    @discardableResult
    public func plantLink(named name: String) throws -> URL {
        let link = folder.appendingPathComponent(name)
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: victim)
        return link
    }

    /// Whether the outside file still holds exactly what it was made with.
    public var isUntouched: Bool {
        (try? Data(contentsOf: victim)) == Self.content
    }
}
