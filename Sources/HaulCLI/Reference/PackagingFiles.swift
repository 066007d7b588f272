/// The files under Packaging/ that are generated from the code: the manual page and the shells'
/// completions, each from the commands' option tables (``CommandReference``).
///
/// They are committed, so that installing needs no Swift; `PackagingFilesTests` holds each
/// equal to its generator, and `HAUL_UPDATE_README=1 swift test --filter PackagingFilesTests`
/// rewrites them after a change to an option table.
enum PackagingFiles {
    /// Each file: its path in the repository and its text.
    static var all: [(path: String, text: String)] {
        [
            ("Packaging/haul.1", ManPage.text),
            ("Packaging/completions/haul.bash", BashCompletion.script),
            ("Packaging/completions/_haul", ZshCompletion.script),
            ("Packaging/completions/haul.fish", FishCompletion.script),
        ]
    }
}
