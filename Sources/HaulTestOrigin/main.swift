// haul-test-origin: the loopback test server (HaulServer) as a program, for scripts that need an
// origin to download from (Scripts/interop-aria2p.py, Scripts/bench.py's daemon part).
//
//   haul-test-origin [--rate=BYTES_PER_SECOND]
//
// Listens on a free port of 127.0.0.1, prints its base URL (http://127.0.0.1:PORT) on one line,
// and serves HaulServer's routes (/bytes/N, /bytes/N/name.ext, ?rate=BPS, /silent, ...) until
// it is killed. --rate sets the default per-connection cap of /bytes.
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

var configuration = HaulServer.Configuration()
for argument in CommandLine.arguments.dropFirst() {
    if argument.hasPrefix("--rate="), let rate = Int(argument.dropFirst("--rate=".count)) {
        configuration.rateLimit = rate
    } else {
        complain("usage: haul-test-origin [--rate=BYTES_PER_SECOND]")
        exit(2)
    }
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
