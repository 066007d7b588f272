extension ManPage {
    /// One variable (or a group read in turn) of the ENVIRONMENT section.
    struct Variable {
        /// The names, the one read first first.
        let names: [String]
        /// What it sets.
        let meaning: String
    }

    /// The environment variables haul reads, in the order the manual lists them.
    /// `PackagingFilesTests` checks that the sources name each one.
    static let variables: [Variable] = [
        Variable(names: ["http_proxy"], meaning: "the proxy for http:// URLs (lower case only: a CGI request's Proxy: header "
                 + "becomes HTTP_PROXY)"),
        Variable(names: ["https_proxy", "HTTPS_PROXY"], meaning: "the proxy for https:// URLs"),
        Variable(names: ["all_proxy", "ALL_PROXY"], meaning: "the proxy for either when its own variable is not set; a variable "
                 + "set but empty means no proxy; --proxy overrides them all, --proxy= turns them off"),
        Variable(names: ["no_proxy", "NO_PROXY"], meaning: "comma-separated hosts, domains, IP addresses and CIDR blocks that "
                 + "bypass the proxy ('*' for all); --noproxy overrides it"),
        Variable(names: ["NETRC"], meaning: "the file -n reads instead of ~/.netrc"),
        Variable(names: ["HOME"], meaning: "where ~/.netrc is, and the daemon's folders when the XDG variables are not set"),
        Variable(names: ["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"], meaning: "the credentials s3:// URLs are signed with "
                 + "(both needed)"),
        Variable(names: ["AWS_SESSION_TOKEN"], meaning: "the token of temporary credentials, for s3:// URLs"),
        Variable(names: ["AWS_REGION", "AWS_DEFAULT_REGION"], meaning: "the region s3:// URLs are signed for; default us-east-1"),
        Variable(names: ["OSS_ACCESS_KEY_ID", "OSS_ACCESS_KEY_SECRET"], meaning: "the credentials oss:// URLs are signed with "
                 + "(both needed)"),
        Variable(names: ["OSS_SESSION_TOKEN"], meaning: "the security token of temporary credentials, for oss:// URLs"),
        Variable(names: ["OSS_REGION"], meaning: "the region oss:// URLs are signed for; default cn-hangzhou"),
        Variable(names: ["XDG_STATE_HOME"], meaning: "an absolute folder whose haul folder holds the daemon's default state "
                 + "and secret files; default ~/.local/state"),
        Variable(names: ["XDG_CONFIG_HOME"], meaning: "the folder whose haul/daemon.conf is the daemon's config file; "
                 + "default ~/.config"),
        Variable(names: ["PGPASSWORD", "PGPASSFILE"], meaning: "the password of a --state=postgresql:// database, or the file "
                 + "holding it (default ~/.pgpass); never the URL. libpq's other PG variables (PGHOST, PGUSER...) apply too"),
        Variable(names: ["PGCONNECT_TIMEOUT"], meaning: "seconds to wait for the PostgreSQL server; default 10"),
        Variable(names: ["TERM"], meaning: "dumb: the progress is plain lines, without escape codes, as when standard error is "
                 + "not a terminal"),
        Variable(names: ["COLUMNS"], meaning: "the progress line's width when the terminal does not tell it"),
    ]

    /// One example: what it does and the command lines.
    struct Example {
        /// One sentence, ending with a colon.
        let purpose: String
        /// Variables set for the commands, as `NAME=value` words shown before them.
        var environment: [String] = []
        /// Each command's arguments after `haul` (`PackagingFilesTests` parses them).
        let commands: [[String]]
    }

    /// The examples of the EXAMPLES section.
    static let exampleList: [Example] = [
        Example(purpose: "Download a file into the current folder, over 4 connections:",
                commands: [["https://example.com/big.iso"]]),
        Example(purpose: "Into ~/Downloads over 8 connections, its SHA-256 checked before it gets its name:",
                commands: [["-d", "~/Downloads", "-x", "8",
                            "--checksum=sha256=e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
                            "https://example.com/big.iso"]]),
        Example(purpose: "One file from two servers:",
                commands: [["--mirror=https://mirror.example.net/big.iso", "https://example.com/big.iso"]]),
        Example(purpose: "The URLs listed in a file, 8 at a time, 2 MiB/s in all, events as JSON lines:",
                commands: [["-i", "urls.txt", "-j", "8", "--limit-rate=2M", "--json"]]),
        Example(purpose: "An object of an S3-compatible store:",
                environment: ["AWS_ACCESS_KEY_ID=AKIA...", "AWS_SECRET_ACCESS_KEY=..."],
                commands: [["--endpoint=https://s3.example.com", "s3://bucket/key"]]),
        Example(purpose: "Through a SOCKS5 proxy that resolves names, with credentials from ~/.netrc:",
                commands: [["--proxy=socks5h://127.0.0.1:1080", "-n", "https://example.com/private/report.pdf"]]),
        Example(purpose: "The speed-up of several connections, with no internet:", commands: [["demo"]]),
        Example(purpose: "The download service, then a download added to it, listed and paused from another terminal:",
                commands: [["daemon", "--dir", "~/Downloads"], ["add", "https://example.com/big.iso"], ["ls"],
                           ["pause", "2089b05ecca3d829"]]),
    ]

    /// The files haul reads and writes.
    static var fileList: [(path: String, meaning: String)] {
        // The daemon's own functions give the paths, with the variables' names in place of their values.
        let state = DaemonPaths.defaultStateFile(["XDG_STATE_HOME": "/XDG_STATE_HOME"])
        let config = DaemonConfigFile.defaultPath(["XDG_CONFIG_HOME": "/XDG_CONFIG_HOME"])
        func shown(_ path: String) -> String {
            path.replacing("/XDG_STATE_HOME", with: "$XDG_STATE_HOME").replacing("/XDG_CONFIG_HOME", with: "$XDG_CONFIG_HOME")
                .replacing("/HOME", with: "~")
        }
        return [
            ("NAME.part, NAME.resume", "beside a download's destination NAME while it downloads: the bytes so far and the "
             + "resume record a rerun continues from; both go once NAME is complete"),
            ("~/.netrc", "credentials per host for -n (it must be private: chmod 600); $NETRC names another"),
            (shown(state), "the daemon's default state file (--state); "
             + shown(DaemonPaths.defaultStateFile(["HOME": "/HOME"])) + " when XDG_STATE_HOME is not set"),
            (shown(DaemonPaths.secretFile(besides: state)), "the secret the daemon makes (mode 0600) beside its state file "
             + "when given neither --secret nor --secret-file; the client commands read the default one"),
            (shown(config), "the daemon's config file (--conf-path), read when it exists; "
             + shown(DaemonConfigFile.defaultPath(["HOME": "/HOME"])) + " when XDG_CONFIG_HOME is not set. aria2's "
             + "key=value lines, the keys the daemon's long option names, # comments; the command line wins"),
            ("~/.pgpass", "the password of a --state=postgresql:// database, as libpq reads it"),
        ]
    }

    /// ENVIRONMENT: a `.TP` entry per variable.
    static var environment: String {
        ".SH ENVIRONMENT\n" + variables.map { variable in
            ".TP\n" + variable.names.map(Roff.bold).joined(separator: ", ") + "\n" + paragraph(variable.meaning)
        }.joined()
    }

    /// FILES: a `.TP` entry per file.
    static var files: String {
        ".SH FILES\n" + fileList.map { ".TP\n" + Roff.italic($0.path) + "\n" + paragraph($0.meaning) }.joined()
    }

    /// EXAMPLES: each purpose, then its commands in an indented example block.
    static var examples: String {
        ".SH EXAMPLES\n" + exampleList.map { example in
            let lines = example.commands.flatMap { arguments in
                shellLines(example.environment + ["haul"] + arguments.map(shellWord))
            }
            return ".PP\n" + paragraph(example.purpose) + ".RS 4\n.EX\n" + lines.map { Roff.escaped($0) + "\n" }.joined() + ".EE\n.RE\n"
        }.joined()
    }

    /// The longest line of an example block: what fits beside the indent in 80 columns.
    static let exampleWidth = 64

    /// `words` as a shell command in lines of at most ``exampleWidth`` characters (a longer
    /// word stays whole), each but the last ending with ` \`, the others indented.
    private static func shellLines(_ words: [String]) -> [String] {
        var lines: [String] = []
        var line = ""
        for word in words {
            if line.isEmpty {
                line = (lines.isEmpty ? "" : "    ") + word
            } else if line.count + 1 + word.count + 2 <= exampleWidth {
                line += " " + word
            } else {
                lines.append(line + " \\")
                line = "    " + word
            }
        }
        return lines + [line]
    }

    /// `word` as a shell reads it: as it is when it holds only safe characters, else in single quotes.
    private static func shellWord(_ word: String) -> String {
        let safe = word.unicodeScalars.allSatisfy { scalar in
            ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar)
                || "~/.:=_-@,%+".unicodeScalars.contains(scalar)
        }
        return safe ? word : "'" + word.replacing("'", with: "'\\''") + "'"
    }
}
