// haul-soak: many downloads through the library against a local server that misbehaves at
// random; every file must end byte-identical or failed with a typed error, and nothing may leak.
import Foundation
import Haul
import HaulServer

/// Writes one line to standard output at once (`print` buffers when the output is a pipe).
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

let settings = SoakSettings.fromEnvironment()

let chaos = HaulServer.Chaos(seed: settings.seed)
let server: HaulServer
do {
    server = try HaulServer(configuration: .init(chaos: chaos))
} catch {
    say("haul-soak: cannot start the server: \(error)")
    exit(1)
}
let folder = FileManager.default.temporaryDirectory.appendingPathComponent("haul-soak-\(UUID().uuidString)")
try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
DispatchQueue.global().asyncAfter(deadline: .now() + settings.timeoutSeconds) {
    say("haul-soak: FAIL: not done after \(settings.timeoutSeconds) s (files left in \(folder.path))")
    exit(3)
}

let files = SoakFile.plan(count: settings.count, seed: settings.seed)
let totalBytes = files.reduce(0) { $0 + $1.size }
say("haul-soak: \(files.count) downloads, \(String(format: "%.1f", Double(totalBytes) / 1_048_576)) MiB in all, "
      + "\(settings.jobs) at once, \(settings.retries) retries, seed \(settings.seed), server \(server.baseURL)")
let before = ProcessStats.current()
let descriptorsBefore = ProcessStats.descriptorTargets()
say("  before: \(before)")

let start = ContinuousClock.now
let outcomes = await SoakRun.downloadAll(files, from: server, into: folder, jobs: settings.jobs,
                                          retries: settings.retries)
let elapsed = ContinuousClock.now - start
let report = SoakRun.check(outcomes, in: folder)
try? FileManager.default.removeItem(at: folder)   // before the idle wait: `exit` runs no `defer`

// Let pooled connections and idle threads retire, then measure again.
try? await Task.sleep(for: .seconds(settings.idleSeconds))
var after = ProcessStats.current()
let idleDeadline = ContinuousClock.now + .seconds(6)
while after.descriptors > before.descriptors + settings.descriptorSlack, ContinuousClock.now < idleDeadline {
    try? await Task.sleep(for: .milliseconds(200))
    after = ProcessStats.current()
}

let injected = HaulServer.Chaos.Fault.allCases.map { "\($0.rawValue) \(chaos.injected[$0] ?? 0)" }.joined(separator: ", ")
say("  took \(String(format: "%.1f", Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18)) s; "
      + "server: \(server.requests.count) requests on \(server.connectionCount) connections; faults injected: \(injected)")
say("  finished byte-identical: \(report.identical)")
let failedByCode = report.failedByCode.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }
say("  failed: \(report.failedByCode.values.reduce(0, +))" + (failedByCode.isEmpty ? "" : " (\(failedByCode.joined(separator: ", ")))"))
say("  retrying events (whole-download retries; a connection's own retries are not events): \(report.retries)")
say("  corrupt: \(report.corrupt.count), unexpected errors: \(report.unexpectedErrors.count), unexpected files: \(report.unexpectedFiles.count)")
say("  after:  \(after) (server connections still open: \(server.openConnectionCount))")

let added = ProcessStats.descriptorTargets().filter { descriptorsBefore[$0.key] != $0.value }.sorted { $0.key < $1.key }
if !added.isEmpty {
    say("  descriptors opened since the start: " + added.map { "\($0.key) -> \($0.value)" }.joined(separator: ", "))
}
var problems = report.corrupt + report.unexpectedErrors + report.unexpectedFiles
if after.descriptors > before.descriptors + settings.descriptorSlack {
    problems.append("descriptor leak: \(before.descriptors) open before, \(after.descriptors) after")
}
for problem in problems.prefix(20) { say("  problem: \(problem)") }
say(problems.isEmpty ? "haul-soak: PASS" : "haul-soak: FAIL (\(problems.count) problems)")
server.stop()
exit(problems.isEmpty ? 0 : 1)
