/// The fuzz targets: one per parser of bytes from strangers, each checking a property that must
/// hold for every input (a violation stops the process, which the fuzzer reports as a crash).
///
/// `haul-fuzz` (Fuzz/Entry, built by `Scripts/fuzz.sh` with `-sanitize=fuzzer,address`) runs the
/// target named by `HAUL_FUZZ_TARGET`; the tests run every target over its seed corpus and the
/// inputs of past crashes (`Fuzz/Corpus`, `Fuzz/Regressions`).
package enum FuzzTargets {
    /// A target: a name (its corpus folder) and the function that takes one input.
    package struct Target: Sendable {
        package let name: String
        package let run: @Sendable (UnsafeRawBufferPointer) -> Void
    }

    /// Every target, by name.
    package static let all: [Target] = [
        Target(name: "response-head", run: HTTPTargets.responseHead),
        Target(name: "chunked-body", run: HTTPTargets.chunkedBody),
        Target(name: "url", run: HTTPTargets.url),
        Target(name: "retry-after", run: HTTPTargets.retryAfter),
        Target(name: "netrc", run: HTTPTargets.netrc),
        Target(name: "cookies", run: HTTPTargets.cookies),
        Target(name: "socks5-reply", run: HTTPTargets.socks5Reply),
        Target(name: "link-header", run: HTTPTargets.linkHeader),
        Target(name: "content-disposition", run: EngineTargets.contentDisposition),
        Target(name: "server-digest", run: EngineTargets.serverDigest),
        Target(name: "resume-record", run: EngineTargets.resumeRecord),
        Target(name: "request-head", run: DaemonTargets.requestHead),
        Target(name: "websocket-frames", run: DaemonTargets.webSocketFrames),
        Target(name: "json", run: DaemonTargets.json),
        Target(name: "rpc-request", run: DaemonTargets.rpcRequest),
        Target(name: "limit-schedule", run: DaemonTargets.limitSchedule),
        Target(name: "daemon-paths", run: PathTargets.daemonPaths),
        Target(name: "metalink", run: MetalinkTargets.metalink),
    ]

    /// The target called `name`, if there is one.
    package static func named(_ name: String) -> Target? {
        all.first { $0.name == name }
    }

    /// Stops the process when `condition` is false: the fuzzer records the input.
    static func require(_ condition: Bool, _ message: @autoclosure () -> String) {
        if !condition { fatalError("fuzz property broken: \(message())") }
    }
}
