import Foundation
import Haul
import HaulCore
@testable import HaulService
import HaulTestSupport
import Testing

/// Whether `needle` occurs in `haystack`, ASCII letters folded: the plain definition the index
/// is held to.
func foldedContains(_ haystack: String, _ needle: String) -> Bool {
    let folded = DownloadFilter.folded(haystack.utf8), wanted = DownloadFilter.folded(needle.utf8)
    guard !wanted.isEmpty else { return true }
    return folded.count >= wanted.count && (0...(folded.count - wanted.count)).contains { Array(folded[$0..<($0 + wanted.count)]) == wanted }
}

/// The filter's matching, by bytes with ASCII letters folded, as the service's index answers it.
@Suite struct DownloadFilterTests {
    func matches(_ text: String, urls: [String] = [], file: String? = nil, name: String? = nil,
                 status: ServiceDownload.Status = .waiting, statuses: Set<ServiceDownload.Status>? = nil) -> Bool {
        var index = SearchIndex()
        index.set(DownloadID(rawValue: 1)!, status: status, urls: urls, file: file, fileName: name)
        return !index.matches(DownloadFilter(text: text, statuses: statuses)).isEmpty
    }

    @Test func textIsFoundInTheFileTheNameOrAnyURLWithASCIILettersFolded() {
        #expect(matches("ISO", urls: ["http://h/debian.iso"]))
        #expect(matches("Debian", file: "/srv/DEBIAN-12.iso"))
        #expect(matches("report", name: "Report.PDF"))
        #expect(matches("two", urls: ["http://h/one", "http://h/two"]))
        #expect(!matches("three", urls: ["http://h/one"], file: "/a/b", name: "c"))
        #expect(matches("", urls: []), "no text finds everything")
    }

    @Test func otherBytesMatchOnlyThemselves() {
        #expect(matches("é", name: "café.txt"))
        #expect(!matches("É", name: "café.txt"), "only ASCII letters fold")
        // "e" then a combining acute is two scalars: the plain "e" is found in it, byte for byte.
        #expect(matches("cafe", name: "cafe\u{301}.txt"))
        #expect(!matches("café", name: "cafe\u{301}.txt"), "no normalisation: the bytes differ")
        #expect(matches("/", name: "a/\u{301}b"), "a slash before a combining mark is still a slash")
    }

    @Test(arguments: ["all", "active", "waiting", "paused", "finished", "failed"])
    func eachStateNameStandsForItsStatuses(name: String) throws {
        let statuses = try #require(DownloadFilter.statuses(named: name))
        let filter = DownloadFilter(statuses: statuses)
        let wanted = ServiceDownload.Status.allCases.filter(filter.wants)
        let expected: [ServiceDownload.Status] = switch name {
        case "all": ServiceDownload.Status.allCases
        case "active": [.active]
        case "waiting": [.waiting]
        case "paused": [.paused]
        case "finished": [.complete]
        default: [.error]
        }
        #expect(wanted == expected)
        #expect(DownloadFilter.statuses(named: "All") == nil, "names are exact")
    }

    @Test func theStatusIsCheckedBeforeTheText() {
        #expect(!matches("a", name: "a", status: .paused, statuses: [.waiting]))
        #expect(matches("a", name: "a", status: .waiting, statuses: [.waiting, .paused]))
    }

    /// Any text the index finds is found by a plain search of the folded bytes, and the other way
    /// round (random ASCII and non-ASCII haystacks).
    @Test func theSearchAgreesWithASearchOfFoldedBytes() {
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("aAbBz/.-é\u{301}".unicodeScalars)
        for _ in 0..<2_000 {
            let haystack = String(String.UnicodeScalarView((0..<Int.random(in: 0...12, using: &generator)).map { _ in alphabet.randomElement()! }))
            let needle = String(String.UnicodeScalarView((0..<Int.random(in: 1...3, using: &generator)).map { _ in alphabet.randomElement()! }))
            #expect(matches(needle, name: haystack) == foldedContains(haystack, needle), "\(haystack) / \(needle)")
        }
    }

    @Test func escapingAStoredValueGoesByScalars() {
        // "\r\n" is one Character; both of its scalars are escaped.
        #expect(StoreText.escape("a\r\nb%") == "a%0D%0Ab%25")
        #expect(StoreText.unescape(Substring(StoreText.escape("x\r\ny"))) == "x\r\ny")
    }
}

/// A service's list filtered: the queue and the newest results in memory, older results read
/// from the store, in the list's order, on both stores.
@Suite(.throttled) struct ServiceFilterTests {
    @Test(arguments: TestStore.available)
    func matchesComeInTheListsOrderFromMemoryAndTheStore(store: TestStore) async throws {
        try await withTemporaryDirectory { (dir) async throws in
            var configuration = serviceConfiguration(dir, store: store)
            configuration.residentResults = 3
            let service = try DownloadService(configuration: configuration)
            defer { service.shutDown() }
            // Eight results (connection refused), five of them kept only in the store.
            var failed: [DownloadID] = []
            for index in 0..<8 { failed.append(try service.add(ServiceRequest(urls: ["http://127.0.0.1:9/gone-\(index).bin"]))) }
            await eventually { service.statistics.stopped == 8 }
            failed = service.stoppedDownloads { 0..<$0 }.map(\.id)   // in the order they ended
            #expect(service.state.withLock { $0.queue.storedResults.count } == 5)
            var queued: [DownloadID] = []
            for index in 0..<5 {
                queued.append(try service.add(ServiceRequest(urls: ["http://127.0.0.1:9/Kept-\(index).ISO"], paused: true)))
            }
            #expect(service.matches(DownloadFilter(text: "kept-")).map(\.id) == queued)
            #expect(service.matches(DownloadFilter(text: ".iso", statuses: [.paused])).map(\.id) == queued)
            #expect(service.matches(DownloadFilter(text: "gone-", statuses: [.error])).map(\.id) == failed,
                    "results oldest first, the stored ones among them")
            #expect(service.matches(DownloadFilter(text: "gone-4")).map(\.status) == [.error])
            #expect(service.matches(DownloadFilter(text: "gone-", statuses: [.complete])).isEmpty)
            #expect(service.matches(DownloadFilter()).map(\.id) == queued + failed, "the queue, then the results")
            let page = service.matchingDownloads(DownloadFilter(text: "GONE")) { size in 2..<min(size, 5) }
            #expect(page.total == 8)
            #expect(page.downloads.map(\.id) == Array(failed[2..<5]), "a page reads stored results too")
            try service.forgetResult(failed[0])
            failed.removeFirst()
            service.shutDown()
            // Started again: the five older results are only in the store, and found there.
            let again = try DownloadService(configuration: configuration)
            defer { again.shutDown() }
            #expect(again.matches(DownloadFilter(text: "gone-", statuses: [.error])).map(\.id) == failed)
            #expect(again.matches(DownloadFilter()).map(\.id) == queued + failed)
            #expect(again.matchingDownloads(DownloadFilter(text: "gone-")) { _ in 0..<2 }.downloads.map(\.id) == Array(failed[0..<2]))
        }
    }
}

/// The index a service's filter reads: the same matches as a plain search of the folded fields,
/// through changes, removals and compactions.
@Suite struct SearchIndexTests {
    @Test func theIndexFindsWhatAPlainSearchFindsThroughChanges() {
        var generator = SystemRandomNumberGenerator()
        var index = SearchIndex()
        var fields: [DownloadID: (ServiceDownload.Status, [String], String?, String?)] = [:]
        let words = ["alpha", "Beta", "gamma.ISO", "dé", "x/y", "zz"]
        for round in 0..<20_000 {
            let id = DownloadID(rawValue: UInt64.random(in: 1...3_000, using: &generator))!
            if round % 5 == 0 {
                index.remove(id)
                fields[id] = nil
                continue
            }
            let status = ServiceDownload.Status.allCases.randomElement(using: &generator)!
            let urls = (0..<Int.random(in: 1...2, using: &generator)).map { _ in "http://h/" + words.randomElement(using: &generator)! }
            let file = Bool.random(using: &generator) ? "/d/" + words.randomElement(using: &generator)! : nil
            let name = Bool.random(using: &generator) ? words.randomElement(using: &generator)! : nil
            index.set(id, status: status, urls: urls, file: file, fileName: name)
            fields[id] = (status, urls, file, name)
        }
        #expect(index.count == fields.count)
        for text in ["", "a", "BETA", "iso", "dé", "/y", "h/zz", "nothing", "http"] {
            for statuses in [nil, Set([ServiceDownload.Status.paused]), Set([.complete, .error])] as [Set<ServiceDownload.Status>?] {
                let filter = DownloadFilter(text: text, statuses: statuses)
                let expected = Set(fields.filter { _, field in
                    filter.wants(field.0) && ([field.2, field.3].compactMap { $0 } + field.1).contains { foldedContains($0, text) }
                }.keys)
                #expect(Set(index.matches(filter).map(\.id)) == expected, "\(text) \(String(describing: statuses))")
            }
        }
    }
}
