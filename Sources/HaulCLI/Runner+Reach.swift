#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Haul

/// Proxies, netrc and cookies: what `--proxy`, `--noproxy`, `--proxy-cacert`,
/// `--proxy-insecure`, `-n`, `--netrc-file` and `-b` add to the downloader's configuration.
extension Runner {
    /// What the files of a run gave.
    struct Reach {
        var netrc: NetrcFile?
        var cookies: CookieFile?
    }

    /// The proxy settings: `--proxy` over the environment, `--noproxy` over `no_proxy`.
    var proxyOptions: Downloader.ProxyOptions {
        let source: Downloader.ProxyOptions.Source = switch options.proxy {
        case nil: .environment(terminal.environment)
        case ""?: .none
        case let url?: .url(url)
        }
        var proxy = Downloader.ProxyOptions(source: source)
        if let list = options.noProxy { proxy.noProxy = list.isEmpty ? [] : [list] }
        if options.noProxy == nil, case .url = source {
            // --proxy with no_proxy from the (injected) environment, as curl.
            proxy.noProxy = [terminal.environment["no_proxy"] ?? terminal.environment["NO_PROXY"] ?? ""]
        }
        proxy.tls = Downloader.TLSOptions(extraCAFile: options.proxyCACertificateFile.map(absolute), insecure: options.proxyInsecure)
        return proxy
    }

    /// Checks the proxy settings and reads the netrc and cookie files, before any connection.
    ///
    /// A bad proxy URL or an unreadable cookie file ends the run (exit 2); a netrc file that is
    /// missing (the default one), not private or unreadable is left out with a warning, as aria2 does.
    ///
    /// - Returns: the files' contents, or the exit status that ends the run.
    func prepareReach() -> Result<Reach, ExitCode> {
        do throws(DownloadError) {
            _ = try proxyOptions.selector()
        } catch {
            terminal.write("haul: \(HumanFormat.printable(error.message))\n", to: .error)
            return .failure(ExitCode(ExitStatus.usage))
        }
        var reach = Reach()
        // A missing ~/.netrc is no news; any other netrc that cannot be used is worth a warning.
        if let path = netrcPath, !(path.isDefault && !FileManager.default.fileExists(atPath: path.path)) {
            do throws(DownloadError) {
                reach.netrc = try NetrcFile(contentsOf: path.path)
            } catch {
                warn(error.message)
            }
        }
        if let file = options.cookieFile {
            do throws(DownloadError) {
                let cookies = try CookieFile(contentsOf: absolute(file))
                if cookies.malformedLines > 0 {
                    warn("\(cookies.malformedLines) line(s) of '\(file)' are not cookies.txt lines; skipped")
                }
                reach.cookies = cookies
            } catch {
                terminal.write("haul: \(HumanFormat.printable(error.message))\n", to: .error)
                return .failure(ExitCode(ExitStatus.usage))
            }
        }
        if options.proxyInsecure { warn("the proxy's TLS certificate is not verified (--proxy-insecure)") }
        return .success(reach)
    }

    /// An exit status carried through a `Result`.
    struct ExitCode: Error {
        let status: Int32
        init(_ status: Int32) { self.status = status }
    }

    /// `--netrc-file`, else with `-n` `$NETRC` or `~/.netrc` (the default, which may be missing).
    private var netrcPath: (path: String, isDefault: Bool)? {
        if let file = options.netrcFile { return (absolute(file), false) }
        guard options.netrc else { return nil }
        if let file = terminal.environment["NETRC"], !file.isEmpty { return (absolute(file), false) }
        guard let home = terminal.environment["HOME"], !home.isEmpty else { return nil }
        return (home + "/.netrc", true)
    }

    private func warn(_ message: String) {
        guard !options.quiet else { return }
        terminal.write("haul: warning: \(HumanFormat.printable(message))\n", to: .error)
    }

    private func absolute(_ path: String) -> String {
        URL(fileURLWithPath: path, relativeTo: URL(fileURLWithPath: terminal.currentDirectory.path, isDirectory: true))
            .standardizedFileURL.path
    }
}
