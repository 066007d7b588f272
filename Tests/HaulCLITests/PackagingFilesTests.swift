@testable import HaulCLI
import Foundation
import HaulTestSupport
import Testing

/// The manual page and the shells' completions under Packaging/ (Sources/HaulCLI/Reference):
/// each committed file is what its generator writes, every option of every command's table is in
/// each of them, and the tables agree with the parser. After changing an option table,
/// regenerate the files with `HAUL_UPDATE_README=1 swift test --filter PackagingFilesTests`.
@Suite("Manual page and completions") struct PackagingFilesTests {
    static let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The committed text of `path` (relative to the repository).
    static func committed(_ path: String) throws -> String {
        try String(contentsOf: repository.appendingPathComponent(path), encoding: .utf8)
    }

    /// What lies in `text` between the first `start` and the `end` after it.
    static func part(of text: String, from start: String, to end: String) throws -> Substring {
        let rest = text[try #require(text.range(of: start), "no \(start) in the file").upperBound...]
        return rest[..<(rest.range(of: end)?.lowerBound ?? rest.endIndex)]
    }

    @Test func theCommittedFilesAreWhatTheGeneratorsWrite() throws {
        let update = ProcessInfo.processInfo.environment["HAUL_UPDATE_README"] == "1"
        for (path, generated) in PackagingFiles.all {
            let url = Self.repository.appendingPathComponent(path)
            if update, (try? String(contentsOf: url, encoding: .utf8)) != generated {
                try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
                try generated.write(to: url, atomically: true, encoding: .utf8)
            }
            let text = try #require(try? Self.committed(path), "\(path) is missing: HAUL_UPDATE_README=1 swift test --filter PackagingFilesTests")
            #expect(text == generated, "\(path) is stale: HAUL_UPDATE_README=1 swift test --filter PackagingFilesTests")
        }
    }

    @Test(arguments: CommandReference.all.map(\.key))
    func everyOptionIsInTheManualPage(_ key: String) throws {
        let command = try #require(CommandReference.all.first { $0.key == key })
        let page = try Self.committed("Packaging/haul.1")
        let heading = switch command.name {
        case nil: ".SH OPTIONS\n"
        case "demo", "daemon": ".SS \"haul \(key)\"\n"
        default: ".SS \"haul add, ls, pause, resume, rm\"\n"
        }
        let section = try Self.part(of: page, from: heading, to: "\n.S")
        for spec in command.table {
            // A .TP tag line: `\fB\-o\fR, \fB\-\-output\fR=...` or `\fB\-\-json\fR`.
            let short = spec.short.map { "\\fB\\-\($0)\\fR, " } ?? ""
            let long = "\\fB\\-\\-" + spec.long.replacing("-", with: "\\-") + "\\fR"
            #expect(section.contains(".TP\n" + short + long), "\(spec.longSpelling) of \(key)")
        }
    }

    @Test(arguments: CommandReference.all.map(\.key))
    func everyOptionIsInEachCompletion(_ key: String) throws {
        let command = try #require(CommandReference.all.first { $0.key == key })
        let bash = try Self.committed("Packaging/completions/haul.bash")
        let bashLine = try #require(bash.split(separator: "\n").first { $0.hasPrefix("    \(key)) echo '") })
        let bashWords = Set(bashLine.split(separator: "'")[1].split(separator: " ").map(String.init))
        let zsh = try Self.committed("Packaging/completions/_haul")
        let zshFunction = try Self.part(of: zsh, from: "_haul_cmd_\(key)() {\n", to: "\n}\n")
        let fish = try Self.committed("Packaging/completions/haul.fish")
        let fishLines = fish.split(separator: "\n").filter { $0.hasPrefix("complete -c haul -n '__haul_is \(key)' ") }
        for spec in command.table {
            let value = spec.takesValue ? "=" : ""
            #expect(bashWords.contains(spec.longSpelling + value), "bash: \(spec.longSpelling) of \(key)")
            #expect(zshFunction.contains("'*\(spec.longSpelling)\(value)["), "zsh: \(spec.longSpelling) of \(key)")
            let fishLine = fishLines.first { $0.contains(" -l \(spec.long) ") }
            #expect(fishLine != nil, "fish: \(spec.longSpelling) of \(key)")
            if let short = spec.short {
                #expect(bashWords.contains("-\(short)"), "bash: -\(short) of \(key)")
                #expect(zshFunction.contains("'*-\(short)\(spec.takesValue ? "+" : "")["), "zsh: -\(short) of \(key)")
                #expect(fishLine?.contains(" -s \(short) -l \(spec.long) ") == true, "fish: -\(short) of \(key)")
            }
        }
    }

    /// Each word a fixed set offers is one the parser takes, each to a different effect, and the
    /// parser's refusal names them all: the two read one list.
    @Test func theFixedSetsAreWhatTheParserAccepts() throws {
        var sets = 0
        for command in CommandReference.all {
            for spec in command.table {
                guard case .choice(let words) = spec.kind else { continue }
                sets += 1
                // Words the completion scripts can hold unquoted.
                #expect(words.allSatisfy { $0.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "-" } })
                let before = (command.name.map { [$0] } ?? [])
                let after = command.name == nil ? ["https://example.com/file"] : []
                let parsed = try words.map { word in try ArgumentParser.parse(before + ["\(spec.longSpelling)=\(word)"] + after) }
                #expect(Set(parsed.map { "\($0)" }).count == words.count, "\(spec.longSpelling): \(words)")
                let refusal = #expect(throws: UsageError.self) { try ArgumentParser.parse(before + ["\(spec.longSpelling)=bogus"] + after) }
                #expect(refusal?.message.hasSuffix("expected " + ArgumentParser.spokenList(words)) == true)
            }
        }
        #expect(sets == 3)  // --metalink, --on-conflict, --engine
        #expect(ArgumentParser.spokenList(["a", "b", "c"]) == "a, b or c")
        #expect(ArgumentParser.spokenList(["a"]) == "a")
    }

    /// Every option a completion offers for a command is one the parser knows for it (whatever
    /// it then says of the value), and every command offered is one the parser dispatches on.
    @Test func theCompletedOptionsAndCommandsAreTheParsers() {
        for command in CommandReference.all {
            let before = command.name.map { [$0] } ?? []
            for spec in command.table {
                do {
                    _ = try ArgumentParser.parse(before + [spec.longSpelling + (spec.takesValue ? "=1" : "")])
                } catch {
                    #expect(!error.message.contains("unrecognized option"), "\(command.key): \(error.message)")
                    #expect(!error.message.contains("apply to add only"), "\(command.key): \(error.message)")
                }
            }
        }
        let helps = CommandReference.subcommands.compactMap { command in command.name.map { try? ArgumentParser.parse([$0, "--help"]) } }
        #expect(helps == [.demoHelp, .daemonHelp] + ClientOptions.Action.allCases.map { _ in .clientHelp })
    }

    /// The kind follows the placeholder where the placeholder says it; the exceptions are named.
    @Test func theValueKindsFollowThePlaceholders() {
        let expected: [String: OptionSpec.ValueKind] = ["FILE": .file, "DIR": .directory, "N": .number, "SECONDS": .number,
                                                        "RATE": .number, "SIZE": .number, "URL": .url, "PROGRAM": .file]
        for command in CommandReference.all {
            for spec in command.table {
                if !spec.takesValue { #expect(spec.kind == .text, "\(spec.longSpelling): a flag has no value kind") }
                guard let placeholder = spec.placeholder, let kind = expected[placeholder] else { continue }
                // The client's --dir is a folder on the daemon's side: no local folder to offer.
                if command.table.contains(where: { $0.id == .rpc }) && spec.id == .directory { continue }
                #expect(spec.kind == kind, "\(spec.longSpelling) of \(command.key) takes \(placeholder)")
            }
        }
    }

    @Test func roffEscapesWhatWouldBeARequestOrAnEscape() {
        #expect(Roff.escaped(".TH a") == "\\&.TH a")
        #expect(Roff.escaped("'Name: value'") == "\\(aqName: value\\(aq")
        #expect(Roff.escaped("a\\fB b") == "a\\efB b")
        #expect(Roff.escaped("--on-conflict=fail") == "\\-\\-on\\-conflict=fail")
        #expect(Roff.escaped("a\nb\tc") == "a b c")
        #expect(Roff.escaped("café \"x\"") == "caf\\[u00E9] \\(dqx\\(dq")
        #expect(Roff.escaped("`--json` lines") == "\\fB\\-\\-json\\fR lines")
        #expect(Roff.synopsis("haul daemon --dir=DIR [OPTION]...")
                == "\\fBhaul\\fR \\fBdaemon\\fR \\fB\\-\\-dir\\fR=\\fIDIR\\fR [\\fIOPTION\\fR]...")
    }

    /// The manual names only variables something reads: the sources, or libpq for its own.
    @Test func everyEnvironmentVariableOfTheManualIsRead() throws {
        let readByLibpq: Set = ["PGPASSWORD", "PGPASSFILE"]
        let sources = Self.repository.appendingPathComponent("Sources")
        var text = ""
        for case let url as URL in FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil)!
        where url.pathExtension == "swift" && !url.path.contains("/Reference/") {
            text += try String(contentsOf: url, encoding: .utf8)
        }
        for name in ManPage.variables.flatMap(\.names) where !readByLibpq.contains(name) {
            #expect(text.contains("\"\(name)\""), "\(name) is in haul.1's ENVIRONMENT, but no source reads it")
        }
    }

    @Test func theExamplesParse() throws {
        for example in ManPage.exampleList {
            for arguments in example.commands {
                let parsed = try ArgumentParser.parse(arguments)
                #expect(![.help, .version, .demoHelp, .daemonHelp, .clientHelp].contains(parsed), "\(arguments)")
            }
        }
    }
}

/// The manual page as groff formats it.
@Suite("haul.1 through groff", .throttled) struct ManPageGroffTests {
    static let groff = ["/usr/bin/groff", "/usr/local/bin/groff"].first { FileManager.default.isExecutableFile(atPath: $0) }

    @Test(.enabled(if: groff != nil, "groff is not installed (apt-get install groff-base)"))
    func groffFormatsItWithoutAWarning() async throws {
        let groff = URL(fileURLWithPath: try #require(Self.groff))
        let page = PackagingFilesTests.repository.appendingPathComponent("Packaging/haul.1").path
        let checked = try await runChildProcess(groff, ["-man", "-ww", "-z", page])
        #expect(checked.status == 0)
        #expect(checked.errorText == "", "groff -man -ww -z Packaging/haul.1 warns")
        // As text (no hyphenation, no overstriking), every long option reads as typed.
        let rendered = try await runChildProcess(groff, ["-man", "-rHY=0", "-Tascii", "-P-cbu", page])
        let text = String(decoding: rendered.standardOutput, as: UTF8.self)
        #expect(rendered.status == 0 && rendered.errorText == "")
        for spec in CommandReference.all.flatMap(\.table) {
            #expect(text.contains(spec.longSpelling + (spec.placeholder.map { "=" + $0 } ?? "")), "\(spec.longSpelling)")
        }
        #expect(text.contains("EXIT STATUS") && text.contains("ENVIRONMENT") && text.contains("XDG_CONFIG_HOME"))
    }
}
