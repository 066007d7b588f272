/// Writes `Packaging/haul.1`, the manual page, in roff with the man(7) macros.
///
/// The synopsis and descriptions are the help texts' (``HelpText/Usage``,
/// ``HelpText/Description``), the options every command's table (``CommandReference``), the
/// exit statuses ``ExitStatus/meanings``; the environment, files and examples are listed in
/// `ManPage+Sections.swift`. Every piece of prose goes through ``Roff/escaped(_:)``.
enum ManPage {
    /// The whole page.
    static var text: String {
        header + synopsis + description + options + commands + exitStatus + environment + files + examples + seeAlso
    }

    private static let header = """
        .\\" haul(1). Generated from haul's option tables by Sources/HaulCLI/Reference/ManPage.swift:
        .\\" do not edit. Regenerate with HAUL_UPDATE_README=1 swift test --filter PackagingFilesTests.
        .TH HAUL 1 "" "Haul" "User Commands"
        .SH NAME
        haul \\- download files over HTTP(S) quickly and safely, alone or as a service

        """

    /// Every usage line: the download command's, then the other commands'.
    private static var synopsis: String {
        let lines: [String] = Array(HelpText.Usage.download.prefix(1)) + HelpText.Usage.demo + HelpText.Usage.daemon + HelpText.Usage.client
        return ".SH SYNOPSIS\n.nf\n" + lines.map { Roff.synopsis($0) + "\n" }.joined() + ".fi\n"
    }

    private static var description: String {
        ".SH DESCRIPTION\n" + paragraph(HelpText.Description.download) + ".PP\n" + paragraph(overview) + ".PP\n" + paragraph(naming)
    }

    /// What the download command's URLs may be, and what lands on disk.
    private static let overview = """
        Each URL is http://, https://, s3://BUCKET/KEY or oss://BUCKET/KEY (signed with the credentials in \
        the environment: see ENVIRONMENT and --endpoint); a local .meta4 file, or a URL whose answer is one, \
        downloads the files of that Metalink document, each from all its servers. Several URLs download \
        side by side (-j). While a file downloads, its bytes go to NAME.part beside its destination NAME and \
        the resume record to NAME.resume; once it is complete and verified, NAME appears atomically and only \
        NAME remains. Nothing is written outside the chosen folder or -o path.
        """

    /// How a download's name is chosen.
    private static let naming = """
        Without -o, the name is the server's Content-Disposition (filename* before filename), else the \
        last path component of the URL given, else `download`, with an extension from the MIME type when \
        it has none; it is always sanitised: one path component, no control characters, never . or .., a \
        leading dot made _, at most 255 bytes with the partial suffix.
        """

    private static var options: String {
        ".SH OPTIONS\n" + optionList(CommandReference.download.table) + ".PP\n" + paragraph(HelpText.durationNote)
    }

    /// `haul demo`, `haul daemon` and the client commands, each with its options.
    private static var commands: String {
        var text = ".SH COMMANDS\n"
        text += section("haul demo", HelpText.Usage.demo, HelpText.Description.demo, OptionTable.demo)
        text += section("haul daemon", HelpText.Usage.daemon, HelpText.Description.daemon, DaemonArguments.daemonTable)
        text += section("haul add, ls, pause, resume, rm", HelpText.Usage.client, HelpText.Description.client,
                        DaemonArguments.clientTable)
        return text
    }

    /// One command's subsection: its usage, its description, its options.
    private static func section(_ title: String, _ usage: [String], _ description: String, _ table: [OptionSpec]) -> String {
        ".SS \"\(title)\"\n.nf\n" + usage.map { Roff.synopsis($0) + "\n" }.joined() + ".fi\n.PP\n" + paragraph(description)
            + optionList(table)
    }

    private static var exitStatus: String {
        var text = ".SH \"EXIT STATUS\"\n"
        for (status, meaning) in ExitStatus.meanings {
            text += ".TP\n.B \(status)\n" + paragraph(meaning)
        }
        let client = HelpText.clientExitStatus.replacing("Exit status: ", with: "")
        return text + ".PP\n" + paragraph("With several downloads the lowest non-zero status wins.")
            + ".PP\n" + paragraph("haul daemon exits 0 once stopped by SIGTERM, SIGINT or aria2.shutdown, 1 when it cannot "
                                  + "start (a secret file group or others may read, a state it cannot open, an address in use), "
                                  + "2 for a usage error.")
            + ".PP\n" + paragraph("The client commands exit with " + client)
    }

    private static let seeAlso = """
        .SH "SEE ALSO"
        .BR curl (1),
        .BR wget (1),
        .BR aria2c (1)

        """

    /// A `.TP` entry per option: its names and value, then its help.
    static func optionList(_ table: [OptionSpec]) -> String {
        table.map { spec in
            var help = spec.help
            if spec.availability == .notYetSupported { help += " (not yet supported)" }
            return ".TP\n" + tag(spec) + "\n" + paragraph(help)
        }.joined()
    }

    /// `\fB\-o\fR, \fB\-\-output\fR=\fIFILE\fR`.
    static func tag(_ spec: OptionSpec) -> String {
        let short = spec.short.map { Roff.bold("-\($0)") + ", " } ?? ""
        return short + Roff.bold(spec.longSpelling) + (spec.placeholder.map { "=" + Roff.italic($0) } ?? "")
    }

    /// `text` (line ends taken as spaces) escaped, as one line of filled text.
    static func paragraph(_ text: String) -> String {
        Roff.escaped(text) + "\n"
    }
}
