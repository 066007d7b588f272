import HaulDaemon
import Testing
@testable import HaulCLI

/// `haul daemon` and the client commands' arguments, and the listen address rule, without a process.
@Suite struct DaemonArgumentsTests {
    @Test func theDaemonListensOnLoopbackByDefault() throws {
        guard case .daemon(let options) = try ArgumentParser.parse(["daemon", "--dir=/tmp/x"]) else {
            Issue.record("not a daemon command")
            return
        }
        #expect(options.listen == "127.0.0.1:6800")
        #expect(ListenAddress(parsing: options.listen)?.isLoopback == true)
        #expect(options.secret == nil && options.secretFile == nil)
        #expect(options.maxDownloads == 4 && options.connections == 4)
    }

    @Test func daemonOptionsParse() throws {
        let parsed = try ArgumentParser.parse(["daemon", "-d", "/d", "--listen=[::1]:7000", "--secret-file=/s", "--state=/st.db", "--node=n1",
                                               "--allow-origin=https://ui.example", "-j", "8", "-x2", "--limit-rate=1M", "--json"])
        guard case .daemon(let options) = parsed else {
            Issue.record("not a daemon command")
            return
        }
        #expect(options.directory == "/d" && options.listen == "[::1]:7000" && options.secretFile == "/s")
        #expect(options.stateFile == "/st.db" && options.node == "n1" && options.allowedOrigins == ["https://ui.example"])
        #expect(options.maxDownloads == 8 && options.connections == 2 && options.rateLimit == 1 << 20 && options.json)
        #expect(try ArgumentParser.parse(["daemon", "--help"]) == .daemonHelp)
    }

    @Test(arguments: [
        (["daemon"], "missing --dir=DIR for daemon"),
        (["daemon", "--dir=/d", "--listen=nowhere"], "invalid value 'nowhere' for --listen: expected HOST:PORT with an IP address, such as 127.0.0.1:6800"),
        (["daemon", "--dir=/d", "--secret=a", "--secret-file=/f"], "--secret and --secret-file exclude each other"),
        (["daemon", "--dir=/d", "-x", "17"], "invalid value '17' for --connections: expected a whole number from 1 to 16"),
        (["daemon", "--dir=/d", "--allow-origin=ui.example"], "invalid value 'ui.example' for --allow-origin: expected http(s)://host[:port]"),
        (["daemon", "--dir=/d", "extra"], "unexpected argument 'extra' for daemon"),
        (["add"], "missing URL for add"),
        (["ls", "x"], "unexpected argument 'x' for ls"),
        (["pause"], "missing ID for pause"),
        (["add", "-o", "n", "http://a/1", "http://a/2"], "--output can only be used with a single URL"),
        (["rm", "-d", "x", "abc"], "--dir and --output apply to add only"),
        (["ls", "--rpc=https://127.0.0.1:1/jsonrpc"], "invalid value 'https://127.0.0.1:1/jsonrpc' for --rpc: expected http://HOST:PORT/jsonrpc"),
    ])
    func mistakesAreUsageErrors(arguments: [String], message: String) {
        #expect(throws: UsageError(message)) { try ArgumentParser.parse(arguments) }
    }

    @Test func clientCommandsParse() throws {
        guard case .client(let add) = try ArgumentParser.parse(["add", "--rpc=http://127.0.0.1:7/jsonrpc", "-d", "sub", "-o", "n.bin",
                                                                 "http://127.0.0.1:1/x"]) else {
            Issue.record("not a client command")
            return
        }
        #expect(add.action == .add && add.operands == ["http://127.0.0.1:1/x"] && add.directory == "sub" && add.output == "n.bin")
        #expect(add.rpc == "http://127.0.0.1:7/jsonrpc")
        guard case .client(let remove) = try ArgumentParser.parse(["rm", "a", "b"]) else { return }
        #expect(remove.action == .remove && remove.operands == ["a", "b"] && remove.rpc == "http://127.0.0.1:6800/jsonrpc")
        #expect(try ArgumentParser.parse(["ls", "-h"]) == .clientHelp)
    }

    @Test func anAddressOtherThanLoopbackNeedsASecretAndSaysSo() throws {
        let everywhere = ListenAddress(host: "0.0.0.0", port: 6800)
        #expect(throws: UsageError.self) { try DaemonCommand.listenNote(everywhere, secret: "") }
        #expect(try DaemonCommand.listenNote(everywhere, secret: nil)?.contains("not a loopback address: every call needs the secret") == true)
        #expect(try DaemonCommand.listenNote(ListenAddress(host: "192.0.2.1", port: 1), secret: "s")?.contains("not a loopback") == true)
        #expect(try DaemonCommand.listenNote(ListenAddress(host: "127.0.0.1", port: 1), secret: nil) == nil)
        #expect(try DaemonCommand.listenNote(ListenAddress(host: "::1", port: 1), secret: "")?.contains("authentication off") == true)
    }
}
