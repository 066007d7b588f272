import Foundation
import Haul
import HaulServer
@testable import HaulService
import HaulTestSupport
import Testing

/// Folders and names whose separator a `Character` hides (`/` followed by a combining mark, or
/// preceded by a prepended mark such as U+0600) never take a download out of the root: the
/// service refuses them, and nothing appears beside the root or through a link inside it.
@Suite("Contained paths through the service", .throttled, .timeLimit(.minutes(2)))
struct ContainedPathServiceTests {
    /// A finding: the options, and whether the test makes `root/link` (or `root/l\u{600}`) point outside.
    struct Finding: Sendable, CustomTestStringConvertible {
        var directory: String = ""
        var fileName: String?
        var link: String?
        var testDescription: String {
            "dir \(directory.unicodeScalars.map { $0.isASCII ? String($0) : "U+\(String($0.value, radix: 16))" }.joined()) "
                + "out \((fileName ?? "-").unicodeScalars.map { $0.isASCII ? String($0) : "U+\(String($0.value, radix: 16))" }.joined())"
        }
    }

    static let findings: [Finding] = [
        Finding(directory: "../\u{301}x"),
        Finding(fileName: "../\u{301}x.txt"),
        Finding(directory: "linkdir/\u{301}x", link: "linkdir"),
        Finding(directory: "l\u{600}/x", link: "l\u{600}"),
        Finding(fileName: "l\u{600}/x.txt", link: "l\u{600}"),
    ]

    @Test(arguments: findings)
    func aHiddenSeparatorIsRefusedAndNothingLandsOutside(_ finding: Finding) async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { (dir) async throws in
            let service = try DownloadService(configuration: serviceConfiguration(dir))
            defer { service.shutDown() }
            let outside = dir.appendingPathComponent("outside")
            try FileManager.default.createDirectory(at: outside, withIntermediateDirectories: true)
            if let link = finding.link {
                try FileManager.default.createSymbolicLink(atPath: service.rootPath + "/" + link, withDestinationPath: outside.path)
            }
            let before = listFiles(dir)
            var options = ServiceDownloadOptions()
            options.directory = finding.directory
            options.fileName = finding.fileName
            // When: the daemon is asked for the download.
            let added = Result { () throws(ServiceError) in
                try service.add(ServiceRequest(urls: [server.url("/bytes/10")], options: options))
            }
            if case .success(let id) = added {
                await eventually { [.complete, .error].contains(service.download(id)?.status) }
            }
            // Then: it is refused as unsafe, and nothing appeared beside the root or through the link.
            #expect(throws: ServiceError.self) { try added.get() }
            if case .failure(let error) = added { #expect(error.code == .unsafePath) }
            #expect(listFiles(dir) == before, "something was created beside the root")
            #expect(listFiles(outside).isEmpty, "something was written through the link")
        }
    }

    /// The root's path is matched and cut by bytes: a root whose last scalar joins the `/` after
    /// it into one `Character` (U+0600) still yields the folder below it.
    @Test func anAbsoluteFolderBelowARootEndingInAPrependedMarkIsCutByBytes() throws {
        try withTemporaryDirectory { dir in
            let root = DownloadRoot(dir.appendingPathComponent("r\u{600}/"))
            try FileManager.default.createDirectory(atPath: root.path, withIntermediateDirectories: false)
            #expect(root.path == dir.path + "/r\u{600}")
            #expect(try root.relativeFolder(root.path + "/x/\u{301}y") == "x/\u{301}y")
            #expect(try root.relativeFolder(root.path) == "")
            #expect(throws: ServiceError.self) { try root.relativeFolder(root.path + "x") }
            #expect(throws: ServiceError.self) { try root.relativeFolder(root.path + "/../x") }
        }
    }
}
