/// The parts of the documentation (docs/CLI.md) that are generated from the code, so they cannot
/// drift from it.
///
/// Each block sits between `<!-- NAME:BEGIN -->` and `<!-- NAME:END -->` lines. `ReadmeTests`
/// holds the file equal to ``blocks``; `HAUL_UPDATE_README=1 swift test --filter ReadmeTests`
/// rewrites its blocks from them after a change to the option table.
enum ReadmeReference {
    /// Each generated block: its marker name and its text (ending with a newline).
    static var blocks: [(name: String, text: String)] {
        [
            ("CLI-REFERENCE", fenced(HelpText.download)),
            ("DEMO-REFERENCE", fenced(HelpText.demo)),
            ("DAEMON-REFERENCE", fenced(HelpText.daemon)),
            ("CLIENT-REFERENCE", fenced(HelpText.client)),
        ]
    }

    /// `<!-- NAME:BEGIN -->`, on a line of its own.
    static func beginMarker(_ name: String) -> String { "<!-- \(name):BEGIN -->\n" }

    /// `<!-- NAME:END -->`, on a line of its own.
    static func endMarker(_ name: String) -> String { "<!-- \(name):END -->" }

    /// The text of block `name` in `readme`, or `nil` when its markers are missing or out of order.
    static func block(_ name: String, in readme: String) -> String? {
        markers(name, in: readme).map { String(readme[$0]) }
    }

    /// `readme` with every generated block replaced by its current text; blocks whose markers
    /// are missing are left out.
    static func updating(_ readme: String) -> String {
        var text = readme
        for (name, generated) in blocks {
            guard let inside = markers(name, in: text) else { continue }
            text.replaceSubrange(inside, with: generated)
        }
        return text
    }

    /// What lies between block `name`'s markers in `text`.
    private static func markers(_ name: String, in text: String) -> Range<String.Index>? {
        guard let begin = text.firstRange(of: beginMarker(name)),
              let end = text[begin.upperBound...].firstRange(of: endMarker(name))
        else { return nil }
        return begin.upperBound..<end.lowerBound
    }

    /// `text` in a Markdown code fence.
    static func fenced(_ text: String) -> String {
        "```\n" + text + "```\n"
    }
}
