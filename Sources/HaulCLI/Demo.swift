#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Haul

/// `haul demo`: Haul working with no internet.
///
/// Starts the built-in loopback server, which caps each connection's speed as many real servers
/// do, then downloads a generated file from it twice with the normal progress display: with
/// 1 connection, then with N (`--connections`, default 4). Each copy is checked byte for byte
/// against what the server generated and removed; the two times and the speed-up are printed.
/// Everything it writes goes into a fresh temporary folder, removed on every path. The server
/// comes from the program (``DemoOrigin``): the command library links none.
struct Demo {
    let options: DemoOptions
    let terminal: any Terminal
    let origin: DemoOrigin.Starter?

    /// Each connection's speed cap on the demo server, in bytes per second: slow enough that one
    /// connection is clearly the bottleneck, fast enough that the default 512 MiB takes about
    /// 13 s with one connection and about 3 s with four.
    static let connectionCap = 40 << 20

    /// The name of the generated file.
    static let fileName = "haul-demo.bin"

    func run() async -> Int32 {
        guard let origin else {
            terminal.write("haul: demo: this program has no built-in server; run `haul demo`\n", to: .error)
            return ExitStatus.failure
        }
        let server: DemoOrigin
        do {
            server = try origin(Self.connectionCap)
        } catch {
            terminal.write("haul: demo: cannot start the built-in server: \(error)\n", to: .error)
            return ExitStatus.failure
        }
        defer { server.stop() }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("haul-demo-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }

        let url = server.url("/bytes/\(options.size)/\(Self.fileName)")
        say("haul demo: a built-in server on \(server.baseURL) serves a generated \(HumanFormat.bytes(options.size)) file")
        say("and caps each connection at \(HumanFormat.speed(Double(Self.connectionCap))), as many real servers do.")

        var times: [Double] = []
        let rounds = [1, options.connections]
        for (number, connections) in rounds.enumerated() {
            say("")
            say("\(number + 1) of \(rounds.count): haul -x \(connections) \(url)")
            switch await round(url: url, connections: connections, folder: folder, server: server) {
            case .success(let seconds): times.append(seconds)
            case .failure(let failure): return failure.status
            }
        }

        say("")
        say(Self.summary(size: options.size, connections: options.connections, single: times[0], multiple: times[1]))
        say("Removed the demo files.")
        return ExitStatus.success
    }

    /// The closing line: both times, both speeds and the speed-up.
    ///
    /// `1 connection: 12.8s (40.0 MiB/s); 4 connections: 3.2s (160.0 MiB/s); speed-up 4.0x`.
    static func summary(size: Int64, connections: Int, single: Double, multiple: Double) -> String {
        func figures(_ seconds: Double) -> String {
            "\(HumanFormat.elapsed(seconds)) (\(HumanFormat.speed(Double(size) / max(seconds, 0.001))))"
        }
        let plural = connections == 1 ? "connection" : "connections"
        let speedUp = HumanFormat.oneDecimal(single / max(multiple, 0.001))
        return "1 connection: \(figures(single)); \(connections) \(plural): \(figures(multiple)); speed-up \(speedUp)x"
    }

    /// Downloads the file once with `connections` connections, verifies it and removes it.
    ///
    /// - Returns: the download's duration, or the exit status to end the demo with.
    private func round(url: String, connections: Int, folder: URL, server: DemoOrigin) async -> Result<Double, RoundFailure> {
        var download = CommandOptions()
        download.urls = [url]
        download.directory = folder.path
        download.connections = connections
        download.continuesPartial = false
        download.retries = 0
        let started = ContinuousClock.now
        let status = await Runner(options: download, terminal: terminal).run()
        let seconds = (ContinuousClock.now - started).secondsValue
        guard status == ExitStatus.success else { return .failure(RoundFailure(status: status)) }

        let file = folder.appendingPathComponent(Self.fileName)
        defer { try? FileManager.default.removeItem(at: file) }
        if let problem = verify(file, against: server) {
            terminal.write("haul: demo: \(problem)\n", to: .error)
            return .failure(RoundFailure(status: DownloadError.Code.checksumMismatch.exitStatus))
        }
        say("verified: all \(options.size) bytes match what the server generated.")
        return .success(seconds)
    }

    /// A round that ended the demo, with the status to exit with.
    private struct RoundFailure: Error {
        var status: Int32
    }

    private func say(_ line: String) {
        terminal.write(line + "\n", to: .error)
    }

    /// Compares the file with the server's deterministic content, 1 MiB at a time.
    ///
    /// - Returns: `nil` when every byte matches, else what differs.
    private func verify(_ file: URL, against server: DemoOrigin) -> String? {
        let fd = open(file.path, O_RDONLY)
        guard fd >= 0 else { return "cannot open \(file.path)" }
        defer { close(fd) }
        let size = 1 << 20
        let got = UnsafeMutableRawBufferPointer.allocate(byteCount: size, alignment: 16)
        let expected = UnsafeMutableRawBufferPointer.allocate(byteCount: size, alignment: 16)
        defer { got.deallocate(); expected.deallocate() }
        var offset: Int64 = 0
        while true {
            let n = read(fd, got.baseAddress, size)
            if n < 0 { return "cannot read \(file.path)" }
            if n == 0 { break }
            server.fill(UnsafeMutableRawBufferPointer(rebasing: expected[0..<n]), offset)
            guard memcmp(got.baseAddress!, expected.baseAddress!, n) == 0 else {
                return "byte mismatch in the block at offset \(offset)"
            }
            offset += Int64(n)
        }
        guard offset == options.size else { return "the file has \(offset) bytes, expected \(options.size)" }
        return nil
    }
}

/// The server `haul demo` downloads from: a loopback server that caps each connection, started
/// by the program that links one (`haul` starts the test server, HaulServer), so the command
/// library itself links no server.
public struct DemoOrigin: Sendable {
    /// Starts a server that caps each connection at the given bytes per second.
    public typealias Starter = @Sendable (_ bytesPerSecond: Int) throws -> DemoOrigin

    /// The server's base URL (`http://127.0.0.1:PORT`).
    public var baseURL: String
    /// The URL of a path on the server; `/bytes/N/NAME` serves N generated bytes as NAME.
    public var url: @Sendable (_ path: String) -> String
    /// Fills a buffer with the generated bytes from an offset, to check a copy against.
    public var fill: @Sendable (_ buffer: UnsafeMutableRawBufferPointer, _ offset: Int64) -> Void
    /// Stops the server.
    public var stop: @Sendable () -> Void

    /// A server described by its parts.
    public init(baseURL: String, url: @escaping @Sendable (_ path: String) -> String,
                fill: @escaping @Sendable (_ buffer: UnsafeMutableRawBufferPointer, _ offset: Int64) -> Void,
                stop: @escaping @Sendable () -> Void) {
        self.baseURL = baseURL
        self.url = url
        self.fill = fill
        self.stop = stop
    }
}
