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
import HaulServer

/// `haul demo`: Haul working with no internet.
///
/// Starts the built-in loopback server (each connection capped, as a real server might), downloads
/// a generated file from it with the normal progress display, checks every byte against what the
/// server generated, prints the figures and removes what it wrote.
struct Demo {
    let options: DemoOptions
    let terminal: any Terminal

    /// Each connection's speed cap on the demo server.
    static let connectionCap = 100 << 20

    func run() async -> Int32 {
        let server: HaulServer
        do {
            server = try HaulServer(configuration: .init(rateLimit: Self.connectionCap))
        } catch {
            terminal.write("haul: demo: cannot start the built-in server: \(error)\n", to: .error)
            return ExitStatus.failure
        }
        defer { server.stop() }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("haul-demo-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }

        let url = server.url("/bytes/\(options.size)/haul-demo.bin")
        say("haul demo: a built-in server on \(server.baseURL) serves a generated \(HumanFormat.bytes(options.size)) file,")
        say("capping each connection at \(HumanFormat.bytes(Int64(Self.connectionCap)))/s. Downloading it with 1 connection:")

        var download = CommandOptions()
        download.urls = [url]
        download.directory = folder.path
        download.connections = 1
        download.retries = 0
        let started = ContinuousClock.now
        let status = await Runner(options: download, terminal: terminal).run()
        let elapsed = ContinuousClock.now - started
        guard status == ExitStatus.success else { return status }

        let file = folder.appendingPathComponent("haul-demo.bin")
        switch verify(file) {
        case .success(let count):
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            say("verified: all \(count) bytes match what the server generated "
                + "(\(HumanFormat.bytes(Int64(Double(count) / max(seconds, 0.001))))/s overall).")
            say("Segmented downloads (--connections) arrive with the next release; the demo will then compare 1 and \(options.connections) connections.")
            say("Removed the demo file; nothing else was written.")
            return ExitStatus.success
        case .failure(let message):
            terminal.write("haul: demo: \(message)\n", to: .error)
            return 9
        }
    }

    private func say(_ line: String) {
        terminal.write(line + "\n", to: .error)
    }

    private enum Verification { case success(Int64), failure(String) }

    /// Compares the file with the server's deterministic content, 1 MiB at a time.
    private func verify(_ file: URL) -> Verification {
        let fd = open(file.path, O_RDONLY)
        guard fd >= 0 else { return .failure("cannot open \(file.path)") }
        defer { close(fd) }
        let content = HaulServer.content()
        let size = 1 << 20
        let got = UnsafeMutableRawBufferPointer.allocate(byteCount: size, alignment: 16)
        let expected = UnsafeMutableRawBufferPointer.allocate(byteCount: size, alignment: 16)
        defer { got.deallocate(); expected.deallocate() }
        var offset: Int64 = 0
        while true {
            let n = read(fd, got.baseAddress, size)
            if n < 0 { return .failure("cannot read \(file.path)") }
            if n == 0 { break }
            content.fill(UnsafeMutableRawBufferPointer(rebasing: expected[0..<n]), from: offset)
            guard memcmp(got.baseAddress!, expected.baseAddress!, n) == 0 else {
                return .failure("byte mismatch in the block at offset \(offset)")
            }
            offset += Int64(n)
        }
        guard offset == options.size else { return .failure("the file has \(offset) bytes, expected \(options.size)") }
        return .success(offset)
    }
}
