import Foundation
import HaulServer
import HaulCore

/// PEM files for TLS tests, made with the `openssl` command-line tool.
///
/// - `caFile`: a test certificate authority (trust it with `--cacert`).
/// - `serverCertFile`/`serverKeyFile`: `localhost` with SAN `DNS:localhost, IP:127.0.0.1, IP:::1`,
///   signed by the CA.
/// - `wrongHostCertFile`/`wrongHostKeyFile`: signed by the same CA, for `wrong.example` only.
/// - `selfSignedCertFile`/`selfSignedKeyFile`: `localhost`, signed by itself.
public struct TestCertificates: Sendable {
    /// The CA certificate.
    public var caFile: String
    /// The `localhost` certificate signed by the CA.
    public var serverCertFile: String
    /// The key of `serverCertFile`.
    public var serverKeyFile: String
    /// A certificate signed by the CA for `wrong.example` only.
    public var wrongHostCertFile: String
    /// The key of `wrongHostCertFile`.
    public var wrongHostKeyFile: String
    /// A self-signed `localhost` certificate.
    public var selfSignedCertFile: String
    /// The key of `selfSignedCertFile`.
    public var selfSignedKeyFile: String

    /// The identity a `HaulServer` serves the trusted `localhost` certificate with.
    public var serverIdentity: HaulServer.TLSIdentity {
        .init(certificateChainFile: serverCertFile, privateKeyFile: serverKeyFile)
    }
    /// The identity for `wrong.example` (hostname mismatch).
    public var wrongHostIdentity: HaulServer.TLSIdentity {
        .init(certificateChainFile: wrongHostCertFile, privateKeyFile: wrongHostKeyFile)
    }
    /// The self-signed identity (untrusted issuer).
    public var selfSignedIdentity: HaulServer.TLSIdentity {
        .init(certificateChainFile: selfSignedCertFile, privateKeyFile: selfSignedKeyFile)
    }

    /// One set per test process, made on first use in a temporary folder that is removed when
    /// the process exits (the keys must not pile up in the temporary directory, one set per run).
    ///
    /// Crashes the test process if `openssl` fails: nothing TLS-related can be tested then.
    public static let shared: TestCertificates = {
        do {
            let directory = try makeTemporaryDirectory()
            sharedDirectory.withLock { $0 = directory.path }
            atexit {
                if let path = TestCertificates.sharedDirectory.withLock({ $0 }) {
                    try? FileManager.default.removeItem(atPath: path)
                }
            }
            return try make(in: directory)
        } catch {
            fatalError("cannot make test certificates: \(error)")
        }
    }()

    /// The folder of `shared`, once made; read by the exit handler that removes it.
    private static let sharedDirectory = SharedStateLock<String?>(nil)

    /// Makes a fresh set of certificates in `dir` (P-256 keys, valid for ten years).
    ///
    /// - Parameter dir: an existing folder; files named `ca.pem`, `server.pem`, ... are written.
    /// - Returns: the paths.
    /// - Throws: `TestCertificates.Failure` with `openssl`'s output when a step fails.
    public static func make(in dir: URL) throws -> TestCertificates {
        func path(_ name: String) -> String { dir.appendingPathComponent(name).path }
        let key = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        let days = ["-days", "3650"]

        try openssl(["req", "-x509"] + key + days + ["-keyout", path("ca.key"), "-out", path("ca.pem"),
                     "-subj", "/CN=Haul Test CA",
                     "-addext", "basicConstraints=critical,CA:TRUE",
                     "-addext", "keyUsage=critical,keyCertSign,cRLSign"])

        func signed(_ name: String, commonName: String, altNames: String, serial: String) throws {
            let extensions = path("\(name).ext")
            try """
            basicConstraints=CA:FALSE
            keyUsage=critical,digitalSignature,keyEncipherment
            extendedKeyUsage=serverAuth
            subjectAltName=\(altNames)

            """.write(toFile: extensions, atomically: true, encoding: .utf8)
            try openssl(["req", "-new"] + key + ["-keyout", path("\(name).key"), "-out", path("\(name).csr"),
                         "-subj", "/CN=\(commonName)"])
            try openssl(["x509", "-req", "-in", path("\(name).csr"), "-CA", path("ca.pem"), "-CAkey", path("ca.key"),
                         "-set_serial", serial, "-out", path("\(name).pem"), "-extfile", extensions] + days)
        }
        try signed("server", commonName: "localhost", altNames: "DNS:localhost,IP:127.0.0.1,IP:::1", serial: "0x1001")
        try signed("wrong-host", commonName: "wrong.example", altNames: "DNS:wrong.example", serial: "0x1002")

        try openssl(["req", "-x509"] + key + days + ["-keyout", path("self-signed.key"), "-out", path("self-signed.pem"),
                     "-subj", "/CN=localhost",
                     "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1,IP:::1"])

        return TestCertificates(
            caFile: path("ca.pem"), serverCertFile: path("server.pem"), serverKeyFile: path("server.key"),
            wrongHostCertFile: path("wrong-host.pem"), wrongHostKeyFile: path("wrong-host.key"),
            selfSignedCertFile: path("self-signed.pem"), selfSignedKeyFile: path("self-signed.key"))
    }

    /// A failed `openssl` run.
    public struct Failure: Error, CustomStringConvertible {
        /// The arguments and what `openssl` printed.
        public var description: String
    }

    private static func openssl(_ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["openssl"] + arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw Failure(description: "openssl \(arguments.joined(separator: " ")) failed: \(text)")
        }
    }
}
