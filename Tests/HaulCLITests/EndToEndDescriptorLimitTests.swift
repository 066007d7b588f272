import Foundation
import HaulServer
import HaulTestSupport
import Testing

/// The real `haul` under a tiny descriptor limit (`ulimit -n`): whatever it runs out of first
/// (the folder, the partial file, a socket, a wake-up descriptor), it exits with a documented
/// status and one readable line, never a signal.
///
/// The limits start at 8: below, the Swift runtime's own dispatch threads race `haul` for the
/// last descriptors and libdispatch traps when it loses (outside `haul`'s code).
@Suite(.throttled, .timeLimit(.minutes(1)))
struct EndToEndDescriptorLimitTests {
    @Test func aTinyDescriptorLimitEndsWithAStatusAndOneLineNeverASignal() async throws {
        let binary = try #require(HaulBinary.url, "the haul executable was not found; run `swift build` first")
        let server = try HaulServer()
        let url = server.url("/bytes/3000000/data.bin")
        try await withTemporaryDirectory { (dir) async throws in
            var statuses: [Int: Int32] = [:]
            var codes: [Int: String] = [:]
            for limit in 8...16 {
                // Given a process that may open `limit` descriptors (inherited ones closed)
                let folder = dir.appendingPathComponent("\(limit)")
                let script = "exec 3>&- 4>&- 5>&- 6>&- 7>&- 8>&- 9>&-; ulimit -n \(limit) && exec \"$0\" \"$@\""
                // When it downloads
                // (The runtime's backtracer off: it needs descriptors of its own, and a trap shows as a signal.)
                let outcome = try await runChildProcess(URL(fileURLWithPath: "/bin/sh"),
                                                        ["-c", script, binary.path, "--json", "--retries=0", "-d", folder.path, url],
                                                        environment: ProcessInfo.processInfo.environment.merging(["SWIFT_BACKTRACE": "enable=no"]) { $1 },
                                                        workingDirectory: dir)
                // Then it ends with a documented status, never a signal, and says why in one line
                statuses[limit] = outcome.status
                let output = String(decoding: outcome.standardOutput, as: UTF8.self)
                let errorLines = outcome.errorText.split(separator: "\n")
                #expect([0, 1, 3].contains(outcome.status), "limit \(limit): status \(outcome.status): \(outcome.errorText)")
                if outcome.status == 0 {
                    #expect(errorLines.isEmpty, "limit \(limit): \(outcome.errorText)")
                    continue
                }
                #expect(errorLines.count == 1, "limit \(limit): \(outcome.errorText)")
                #expect(errorLines.first?.hasPrefix("haul: \(url): ") == true, "limit \(limit): \(outcome.errorText)")
                #expect(errorLines.first?.hasSuffix("Too many open files") == true, "limit \(limit): \(outcome.errorText)")
                let failed = output.split(separator: "\n").last.flatMap {
                    try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
                }
                #expect(failed?["event"] as? String == "failed", "limit \(limit): \(output)")
                codes[limit] = (failed?["error"] as? [String: Any])?["code"] as? String
            }
            // Some limit is short of a socket or a wake-up descriptor (resourceExhausted, exit 1),
            // and with enough descriptors the download works
            let exhausted = codes.filter { $0.value == "resourceExhausted" }.keys
            #expect(!exhausted.isEmpty, "statuses by limit: \(statuses.sorted { $0.key < $1.key }), codes: \(codes)")
            #expect(exhausted.allSatisfy { statuses[$0] == 1 })
            #expect(statuses[16] == 0, "statuses by limit: \(statuses.sorted { $0.key < $1.key })")
        }
    }
}
