import Haul

/// Writes `haul --help` from ``OptionTable``.
enum HelpText {
    /// The width help is wrapped to.
    static let width = 80

    /// The full `haul --help` text, ending with a newline.
    static var download: String {
        """
        \(usage(Usage.download))

        \(Description.download)

        Options:
        \(optionLines(OptionTable.download))
        \(durationNote)

        Exit status: 0 all downloads succeeded; 1 generic failure; 2 usage error;
        3 local file error; 4 network failure; 5 TLS failure; 6 authentication refused;
        7 protocol error; 8 server error response; 9 integrity failure;
        10 destination exists (--on-conflict=fail); 11 file locked by another download;
        130 interrupted. With several downloads the lowest non-zero status wins.

        """
    }

    /// The `haul --version` line, ending with a newline: `haul VERSION (commit COMMIT, Swift
    /// VERSION, OpenSSL VERSION)`, with "commit unknown" when the build named no commit.
    static var version: String {
        "haul \(HaulInfo.version) (commit \(HaulInfo.commit ?? "unknown"), Swift \(HaulInfo.swiftVersion), \(HaulInfo.tlsLibrary))\n"
    }

    /// The `haul demo --help` text, ending with a newline.
    static var demo: String {
        """
        \(usage(Usage.demo))

        \(Description.demo)

        Options:
        \(optionLines(OptionTable.demo))
        """
    }

    /// The `haul daemon --help` text, ending with a newline.
    static var daemon: String {
        """
        \(usage(Usage.daemon))

        \(Description.daemon)

        Options:
        \(optionLines(DaemonArguments.daemonTable))
        """
    }

    /// The client commands' `--help` text, ending with a newline.
    static var client: String {
        """
        \(usage(Usage.client))

        \(Description.client)

        Options:
        \(optionLines(DaemonArguments.clientTable))
        \(clientExitStatus)

        """
    }

    /// The usage lines of each help text (command lines, `haul` first); the manual's SYNOPSIS
    /// is made of them too.
    enum Usage {
        /// `haul --help`'s.
        static let download = ["haul [OPTION]... URL...", "haul demo [--size=SIZE] [--connections=N]",
                               "haul daemon --dir=DIR [OPTION]...", "haul add URL... | haul ls | haul pause|resume|rm ID..."]
        /// `haul demo --help`'s.
        static let demo = ["haul demo [--size=SIZE] [--connections=N]"]
        /// `haul daemon --help`'s.
        static let daemon = ["haul daemon --dir=DIR [OPTION]..."]
        /// The client commands'.
        static let client = ["haul add [-d DIR] [-o NAME] URL...", "haul ls", "haul pause ID...", "haul resume ID...", "haul rm ID..."]
    }

    /// The paragraph under each help text's usage, wrapped to ``width``; the manual's
    /// DESCRIPTION and command sections are made of them too.
    enum Description {
        /// What `haul` does.
        static let download = """
            Download files over HTTP(S) quickly and safely: a file gets its final name only
            once it is complete. Rerunning the same command after an interruption resumes:
            bytes already on disk and still valid are not downloaded again.
            """
        /// What `haul demo` does.
        static let demo = """
            Serves a generated file on 127.0.0.1 and downloads it twice, with 1 connection
            and with N, to show the speed-up with no internet. Removes what it wrote.
            """
        /// What `haul daemon` does.
        static let daemon = """
            Runs the download service: a queue kept in an SQLite file, so downloads
            outlive the process, served over aria2's JSON-RPC (HTTP POST and WebSocket at
            /jsonrpc), so aria2 clients such as aria2p work with it. SIGTERM or SIGINT
            pause the transfers (their partial files kept), close the state file and exit
            0; the next start continues them.
            """
        /// What the client commands do.
        static let client = """
            Talk to a running haul daemon: add downloads (prints their IDs), list them,
            pause, resume, or remove them (rm forgets a finished, failed or removed one).
            An ID may be shortened to a unique prefix.
            """
    }

    /// The note under `haul --help`'s options.
    static let durationNote = "Durations are in seconds and may have decimals (2.5)."

    /// The client commands' exit statuses, as their help gives them.
    static let clientExitStatus = """
        Exit status: 0 success; 1 the daemon refused a call; 2 usage error; 4 the
        daemon cannot be reached; 6 the secret was refused.
        """

    /// `Usage: ` and the first line, then the others under it.
    private static func usage(_ lines: [String]) -> String {
        (["Usage: " + (lines.first ?? "")] + lines.dropFirst().map { "       " + $0 }).joined(separator: "\n")
    }

    /// The option list: names in a left column, help wrapped in the right one.
    static func optionLines(_ table: [OptionSpec]) -> String {
        let lefts = table.map(leftColumn)
        let column = (lefts.map(\.count).max() ?? 0) + 2
        var text = ""
        for (spec, left) in zip(table, lefts) {
            var help = spec.help
            if spec.availability == .notYetSupported { help += " (not yet supported)" }
            let lines = wrap(help, width: width - column)
            text += left.padding(toWidth: column) + (lines.first ?? "") + "\n"
            for line in lines.dropFirst() {
                text += String(repeating: " ", count: column) + line + "\n"
            }
        }
        return text
    }

    /// `  -o, --output=FILE` or `      --json`.
    static func leftColumn(_ spec: OptionSpec) -> String {
        let short = spec.short.map { "  -\($0), " } ?? "      "
        let value = spec.placeholder.map { "=" + $0 } ?? ""
        return short + spec.longSpelling + value
    }

    /// Splits `text` into lines of at most `width` characters at spaces (a longer word stays whole).
    static func wrap(_ text: String, width: Int) -> [String] {
        var lines: [String] = []
        var line = ""
        for word in text.split(separator: " ") {
            if line.isEmpty {
                line = String(word)
            } else if line.count + 1 + word.count <= width {
                line += " " + word
            } else {
                lines.append(line)
                line = String(word)
            }
        }
        if !line.isEmpty { lines.append(line) }
        return lines
    }
}
