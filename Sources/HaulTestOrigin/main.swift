// haul-test-origin: the loopback test server (HaulServer) as a program, for scripts that need an
// origin to download from (Scripts/interop-aria2p.py, Scripts/bench.py's daemon part,
// Scripts/soak-daemon.py).
//
//   haul-test-origin [--rate=BYTES_PER_SECOND] [--chaos=SEED [--drop=P] [--stall=P]
//                    [--unavailable=P] [--reset=P] [--change=P]]
//
// Listens on a free port of 127.0.0.1, prints its base URL (http://127.0.0.1:PORT) on one line,
// and serves HaulServer's routes (/bytes/N, /bytes/N/name.ext, ?rate=BPS, /silent,
// /sha256/N?seed=S, ...) until it is killed. --rate sets the default per-connection cap of
// /bytes. --chaos turns on HaulServer.Chaos with that seed: each GET of /bytes draws a fault
// with the given probabilities (default those of HaulServer.Chaos.Odds; --change defaults to 0).
import HaulServer
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes a line to standard error.
func complain(_ line: String) {
    let bytes = Array((line + "\n").utf8)
    _ = write(2, bytes, bytes.count)
}

let usage = "usage: haul-test-origin [--rate=BYTES_PER_SECOND] [--chaos=SEED [--drop=P] [--stall=P] "
    + "[--unavailable=P] [--reset=P] [--change=P]]"

/// The value of `--name=VALUE` in `argument`, parsed, or `nil` when the argument is another one.
func value<T>(_ argument: String, _ name: String, _ parse: (Substring) -> T?) -> T?? {
    guard argument.hasPrefix("--\(name)=") else { return nil }
    return .some(parse(argument.dropFirst(name.count + 3)))
}

/// A probability in `0...1`.
func probability(_ text: Substring) -> Double? {
    Double(text).flatMap { (0...1).contains($0) ? $0 : nil }
}

var configuration = HaulServer.Configuration()
var chaosSeed: UInt64?
var odds = HaulServer.Chaos.Odds()
for argument in CommandLine.arguments.dropFirst() {
    let parsed: Bool
    if let rate = value(argument, "rate", { Int($0) }) {
        configuration.rateLimit = rate
        parsed = rate != nil
    } else if let seed = value(argument, "chaos", { UInt64($0) }) {
        chaosSeed = seed
        parsed = seed != nil
    } else if let drop = value(argument, "drop", probability) {
        odds.drop = drop ?? 0
        parsed = drop != nil
    } else if let stall = value(argument, "stall", probability) {
        odds.stall = stall ?? 0
        parsed = stall != nil
    } else if let unavailable = value(argument, "unavailable", probability) {
        odds.unavailable = unavailable ?? 0
        parsed = unavailable != nil
    } else if let reset = value(argument, "reset", probability) {
        odds.reset = reset ?? 0
        parsed = reset != nil
    } else if let change = value(argument, "change", probability) {
        odds.change = change ?? 0
        parsed = change != nil
    } else {
        parsed = false
    }
    guard parsed else {
        complain("haul-test-origin: bad argument '\(argument)'")
        complain(usage)
        exit(2)
    }
}
if let chaosSeed {
    configuration.chaos = HaulServer.Chaos(seed: chaosSeed, odds: odds)
}
do {
    let server = try HaulServer(configuration: configuration)
    let line = Array((server.baseURL + "\n").utf8)
    _ = write(1, line, line.count)
    while true { pause() }
} catch {
    complain("haul-test-origin: \(error)")
    exit(1)
}
