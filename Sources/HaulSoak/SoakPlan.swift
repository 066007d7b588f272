import Foundation

/// The settings of one soak run, from the environment.
struct SoakSettings {
    /// Downloads to run (`SOAK_COUNT`, default 300).
    var count = 300
    /// Seed of the file sizes and of the server's faults (`SOAK_SEED`, default 2026).
    var seed: UInt64 = 2026
    /// Downloads running at once (`SOAK_JOBS`, default 32).
    var jobs = 32
    /// Seconds to wait after the last download before measuring again (`SOAK_IDLE`, default 6):
    /// idle threads retire after 5 s.
    var idleSeconds = 6.0
    /// The whole run's bound in seconds (`SOAK_TIMEOUT`, default 240); past it the soak fails.
    var timeoutSeconds = 240.0
    /// Retries per download and per connection (`SOAK_RETRIES`, default 3).
    var retries = 3
    /// Descriptors the process may hold after the soak beyond what it held before.
    var descriptorSlack = 4

    /// Reads the `SOAK_*` variables; an unparsable value is a usage error.
    static func fromEnvironment() -> SoakSettings {
        var settings = SoakSettings()
        let environment = ProcessInfo.processInfo.environment
        func read<T>(_ name: String, _ parse: (String) -> T?, into value: inout T) {
            guard let text = environment[name], !text.isEmpty else { return }
            guard let parsed = parse(text) else {
                FileHandle.standardError.write(Data("haul-soak: \(name)=\(text) is not a valid value\n".utf8))
                exit(2)
            }
            value = parsed
        }
        read("SOAK_COUNT", { Int($0).flatMap { $0 > 0 ? $0 : nil } }, into: &settings.count)
        read("SOAK_SEED", { UInt64($0) }, into: &settings.seed)
        read("SOAK_JOBS", { Int($0).flatMap { $0 > 0 ? $0 : nil } }, into: &settings.jobs)
        read("SOAK_RETRIES", { Int($0).flatMap { $0 >= 0 ? $0 : nil } }, into: &settings.retries)
        read("SOAK_IDLE", { Double($0).flatMap { $0 >= 0 ? $0 : nil } }, into: &settings.idleSeconds)
        read("SOAK_TIMEOUT", { Double($0).flatMap { $0 > 0 ? $0 : nil } }, into: &settings.timeoutSeconds)
        return settings
    }
}

/// One file of the soak: its name, size and content seed.
struct SoakFile: Sendable {
    var index: Int
    var size: Int64
    var seed: UInt64

    var name: String { "f\(index).bin" }

    /// The server path that serves it.
    var path: String { "/bytes/\(size)/\(name)?seed=\(seed)" }

    /// `count` files with sizes spread log-uniformly over 1 KiB ... 8 MiB, drawn from `seed`.
    static func plan(count: Int, seed: UInt64) -> [SoakFile] {
        var state = seed
        let low = log(1024.0), high = log(8.0 * 1024 * 1024)
        return (0..<count).map { index in
            let unit = nextUnit(&state)
            let size = Int64(exp(low + unit * (high - low)).rounded())
            return SoakFile(index: index, size: size, seed: UInt64(index) &+ seed &* 1000)
        }
    }

    /// SplitMix64, as a number in `0...1`.
    private static func nextUnit(_ state: inout UInt64) -> Double {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return Double((z ^ (z >> 31)) >> 11) / Double((UInt64(1) << 53) - 1)
    }
}
