import Foundation
import Haul
import HaulDashboard
import HaulServer
import HaulService
import HaulTestSupport
import Testing
@testable import HaulDaemon
import HaulJSON

/// The web dashboard as `haul daemon` serves it, seen from a loopback client: the page and its
/// headers, no path out of the embedded files, the daemon's rules before it, the page providers
/// asked in order.
@Suite(.throttled, .timeLimit(.minutes(2)))
struct DashboardServingTests {
    static func get(_ port: Int, _ target: String, fields: [String] = [], method: String = "GET") throws -> RawResponse {
        var head = "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n"
        for field in fields { head += field + "\r\n" }
        return try RawConnection(port: port).exchange(Array((head + "\r\n").utf8))
    }

    /// `haul daemon`'s pages: the dashboard alone.
    static func dashboard(_ server: inout DaemonServer.Configuration) {
        server.pages = [Dashboard()]
    }

    @Test func thePageIsServedAtTheRootWithItsPolicy() async throws {
        try await DaemonServerTests.withDaemon(configure: Self.dashboard) { daemon in
            let port = daemon.server.address.port
            let page = try Self.get(port, "/")
            #expect(page.status == 200)
            #expect(page.body.hasPrefix("<!doctype html>"))
            #expect(page.field("Content-Type")?.hasPrefix("text/html") == true)
            #expect(page.field("Content-Security-Policy") == Dashboard.contentSecurityPolicy)
            #expect(page.field("Content-Security-Policy")?.contains("frame-ancestors 'none'") == true)
            #expect(page.field("X-Content-Type-Options") == "nosniff")
            #expect(page.field("Referrer-Policy") == "no-referrer")
            #expect(page.field("Content-Length") == String(page.body.utf8.count))
            let tag = try #require(page.field("ETag"))
            #expect(try Self.get(port, "/index.html?x=1").body == page.body)
            #expect(try Self.get(port, "/", fields: ["If-None-Match: \(tag)"]).status == 304)
            let script = try Self.get(port, "/app.js")
            #expect(script.status == 200 && script.field("Content-Type")?.hasPrefix("text/javascript") == true)
            #expect(script.field("Content-Security-Policy") == Dashboard.contentSecurityPolicy)
        }
    }

    @Test(arguments: ["/%2e%2e/", "/../Package.swift", "/%2e%2e/Package.swift", "/..%2fPackage.swift", "//app.js",
                      "/app.js/", "/Assets/app.js", "/Sources/HaulDashboard/Assets/app.js", "/etc/passwd", "/jsonrpc/../app.js"])
    func noPathLeavesTheEmbeddedFiles(_ target: String) async throws {
        try await DaemonServerTests.withDaemon(configure: Self.dashboard) { daemon in
            let answer = try Self.get(daemon.server.address.port, target)
            #expect(answer.status == 404, "\(target): \(answer.status)")
            #expect(!answer.body.contains("swift-tools-version") && !answer.body.contains("root:"))
            #expect(answer.field("ETag") == nil)
        }
    }

    @Test func theDaemonsRulesComeFirst() async throws {
        try await DaemonServerTests.withDaemon(configure: Self.dashboard) { daemon in
            let port = daemon.server.address.port
            let rebound = try RawConnection(port: port).exchange(Array("GET / HTTP/1.1\r\nHost: attacker.example:\(port)\r\n\r\n".utf8))
            #expect(rebound.status == 403 && !rebound.body.contains("<!doctype"), "DNS rebinding")
            let framed = try Self.get(port, "/", fields: ["Origin: http://attacker.example"])
            #expect(framed.status == 403)
            let posted = try RawConnection(port: port).exchange(Array(
                "POST / HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nContent-Length: 0\r\n\r\n".utf8))
            #expect(posted.status == 405 && posted.field("Allow") == "GET, HEAD")
        }
    }

    @Test func withoutPagesTheRootIsNotFound() async throws {
        try await DaemonServerTests.withDaemon { daemon in
            let answer = try Self.get(daemon.server.address.port, "/")
            #expect(answer.status == 404 && !answer.body.contains("<!doctype"))
        }
    }

    @Test func theProvidersAreAskedInOrderAndTheFirstAnswerIsSent() async throws {
        try await DaemonServerTests.withDaemon(configure: {
            $0.pages = [Dashboard(), TextPages(pages: ["/": "shadowed", "/notes.txt": "notes"])]
        }) { daemon in
            let port = daemon.server.address.port
            let page = try Self.get(port, "/")
            #expect(page.status == 200 && page.body.hasPrefix("<!doctype html>"), "the dashboard comes first")
            let notes = try Self.get(port, "/notes.txt?x=1")
            #expect(notes.status == 200 && notes.body == "notes" && notes.field("Content-Type") == "text/plain")
            #expect(notes.field("ETag") == nil && notes.field("Content-Security-Policy") == nil, "its own fields only")
            #expect(try Self.get(port, "/missing.txt").status == 404)
        }
    }
}

/// The `segments` key of `tellStatus` that the page's segment map draws, for a download on
/// four connections.
/// Exclusive: the origin paces the transfer (256 KiB/s a connection) so the segments are seen in flight.
@Suite(.exclusive, .serialized, .timeLimit(.minutes(2)))
struct DashboardSegmentsTests {
    @Test func aFourConnectionDownloadReportsItsSegments() async throws {
        let origin = try HaulServer()
        let size: Int64 = 16 << 20
        origin.setResource("/four.bin", HaulServer.Resource(size: size, seed: 4, etag: "\"four\"", rate: 256 << 10))
        try await DaemonServerTests.withDaemon { daemon in
            let add = try DaemonServerTests.post(daemon, #"{"jsonrpc":"2.0","id":1,"method":"aria2.addUri","params":["token:sekret",["\#(origin.url("/four.bin"))"],{"split":"4","max-connection-per-server":"4"}]}"#)
            let gid = try #require(try JSONParser().parse(Array(add.body.utf8)).object?["result"]?.string)
            let status = #"{"jsonrpc":"2.0","id":2,"method":"aria2.tellStatus","params":["token:sekret","\#(gid)"]}"#
            var segments: [JSONValue] = []
            // Long enough for a loaded machine to start all four (a CI run once saw none in 20 s).
            let deadline = ContinuousClock.now + .seconds(60)
            while ContinuousClock.now < deadline {
                let reply = try JSONParser().parse(Array(try DaemonServerTests.post(daemon, status).body.utf8))
                let found = reply.object?["result"]?.object?["segments"]?.array ?? []
                if found.count == 4, found.allSatisfy({ Int64($0.object?["position"]?.string ?? "") ?? 0 > Int64($0.object?["start"]?.string ?? "") ?? 0 }) {
                    segments = found
                    break
                }
                try await Task.sleep(for: .milliseconds(100))
            }
            try #require(segments.count == 4, "four connections in flight")
            var covered: [Range<Int64>] = []
            for segment in segments {
                let object = try #require(segment.object)
                #expect(object.members.map(\.key) == ["start", "end", "position"])
                let start = try #require(object["start"]?.string.flatMap { Int64($0) })
                let end = try #require(object["end"]?.string.flatMap { Int64($0) })
                let position = try #require(object["position"]?.string.flatMap { Int64($0) })
                #expect(start <= position && position <= end && end <= size)
                covered.append(start..<end)
            }
            covered.sort { $0.lowerBound < $1.lowerBound }
            #expect(covered.first?.lowerBound == 0 && covered.last?.upperBound == size, "\(covered)")
            #expect(zip(covered, covered.dropFirst()).allSatisfy { $0.upperBound == $1.lowerBound }, "\(covered)")
            let listed = #"{"jsonrpc":"2.0","id":3,"method":"aria2.tellActive","params":["token:sekret",["gid","connections"]]}"#
            #expect(!(try DaemonServerTests.post(daemon, listed).body.contains("segments")), "only tellStatus carries them")
            let paused = #"{"jsonrpc":"2.0","id":4,"method":"aria2.forcePause","params":["token:sekret","\#(gid)"]}"#
            _ = try DaemonServerTests.post(daemon, paused)
            #expect(!(try DaemonServerTests.post(daemon, status).body.contains("segments")), "none while paused")
        }
    }
}

/// Fixed text pages by path (the query string ignored): a provider besides the dashboard.
struct TextPages: PageProvider {
    let pages: [String: String]

    /// The text at the request's path, with its type and length; `nil` for another path.
    func response(to head: HTTPRequestHead) -> PageResponse? {
        guard let text = pages[String(head.path)] else { return nil }
        let body = Array(text.utf8)
        return PageResponse(status: 200, fields: [.init("Content-Type", "text/plain"), .init("Content-Length", String(body.count))],
                            body: head.method == "HEAD" ? [] : body)
    }
}
