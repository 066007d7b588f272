/// Turns the reader's events into a ``Metalink``: keeps the Metalink 4 elements it knows,
/// skips everything else (other namespaces with everything inside them, unknown elements), and
/// checks each file at its end tag.
struct MetalinkBuilder {
    /// Where the builder is: one context per open element.
    enum Context {
        case root
        case file
        case pieces
        /// An element whose text is collected.
        case field(Field)
        /// An element ignored with everything inside it.
        case skipped
    }

    /// An element whose text the builder reads, with the attributes it needs.
    enum Field {
        case size, identity, version, description
        case hash(type: String?)
        case pieceHash
        case url(priority: String?, location: String?)
        case metaurl(mediatype: String?)
    }

    var contexts: [Context] = []
    /// The text of the field being read.
    var text = ""
    /// The `<file>` being read.
    var file: FileDraft?
    var files: [Metalink.File] = []
    /// The names of the files kept (compared as Swift compares strings: canonically equivalent
    /// names are the same).
    var names: Set<String> = []
    var warnings = Warnings()
    /// Why the first skipped file was skipped, for the error when none is left.
    var firstSkip: String?
    /// The `<file>` elements met so far.
    var fileCount = 0

    /// Takes one event.
    ///
    /// - Throws: `notMetalink` when the root element is not Metalink 4's.
    mutating func handle(_ event: XMLEvent) throws(MetalinkError) {
        switch event {
        case .start(let tag):
            guard let parent = contexts.last else {
                try Self.checkRoot(tag.name)
                contexts.append(.root)
                return
            }
            guard tag.name.namespace == Metalink.namespace else {
                contexts.append(.skipped)
                return
            }
            let context = child(tag, of: parent)
            if case .field = context { text = "" }
            contexts.append(context)
            guard fileCount <= Metalink.Limits.files else {
                throw MetalinkError(.limitExceeded, "more than \(Metalink.Limits.files) files in one document")
            }
        case .text(let run):
            if case .field = contexts.last { text += run }
        case .end:
            end()
        }
    }

    /// Refuses a root that is not `metalink` in the Metalink 4 namespace.
    static func checkRoot(_ name: XMLName) throws(MetalinkError) {
        guard name.localName != "metalink" || name.namespace != Metalink.namespace else { return }
        let shown = Redaction.safe(name.namespace.map { "{\($0)}" } ?? "") + Redaction.safe(name.localName)
        let hint = name.namespace == "http://www.metalinker.org/" ? " (Metalink 3 is not read, only Metalink 4, RFC 5854)" : ""
        throw MetalinkError(.notMetalink, "the root element is \(shown), not metalink in \(Metalink.namespace)\(hint)")
    }

    /// The context of a Metalink 4 element inside `parent`.
    mutating func child(_ tag: XMLStartTag, of parent: Context) -> Context {
        switch (parent, tag.name.localName) {
        case (.root, "file"):
            fileCount += 1
            file = FileDraft(name: tag.attribute("name"))
            return .file
        case (.file, "size"): return .field(.size)
        case (.file, "identity"): return .field(.identity)
        case (.file, "version"): return .field(.version)
        case (.file, "description"): return .field(.description)
        case (.file, "hash"): return .field(.hash(type: tag.attribute("type")))
        case (.file, "url"): return .field(.url(priority: tag.attribute("priority"), location: tag.attribute("location")))
        case (.file, "metaurl"): return .field(.metaurl(mediatype: tag.attribute("mediatype")))
        case (.file, "pieces"):
            file?.startPieces(type: tag.attribute("type"), length: tag.attribute("length"))
            return .pieces
        case (.pieces, "hash"): return .field(.pieceHash)
        default: return .skipped
        }
    }

    /// Closes the innermost context: a field's text goes to the file, a file is checked.
    mutating func end() {
        guard let context = contexts.popLast() else { return }
        switch context {
        case .field(let field):
            file?.take(field, text: text)
            text = ""
        case .pieces:
            file?.endPieces()
        case .file:
            if let draft = file { accept(draft) }
            file = nil
        case .root, .skipped:
            break
        }
    }

    /// Keeps the file `draft` describes, or records why not.
    mutating func accept(_ draft: FileDraft) {
        warnings.add(draft.notes, prefix: "file '\(draft.shownName)': ")
        var reason: String?
        switch draft.finished() {
        case .success(let file):
            guard !names.contains(file.name) else {
                reason = "a file of that name comes before it"
                break
            }
            names.insert(file.name)
            files.append(file)
        case .failure(let refusal):
            reason = refusal.reason
        }
        guard let reason else { return }
        let line = draft.name == nil ? "a <file> skipped: \(reason)" : "file '\(draft.shownName)' skipped: \(reason)"
        firstSkip = firstSkip ?? line
        warnings.add(line)
    }

    /// The document's value once every event is taken.
    ///
    /// - Throws: `noUsableFile` when no file was kept.
    func finish() throws(MetalinkError) -> Metalink {
        guard !files.isEmpty else {
            throw MetalinkError(.noUsableFile, "no usable file: \(firstSkip ?? "the document lists no <file>")")
        }
        return Metalink(files: files, warnings: warnings.lines)
    }
}

/// The warnings of one document (or the notes of one file), at most
/// ``Metalink/Limits/warnings`` lines.
struct Warnings {
    private(set) var kept: [String] = []
    private(set) var dropped = 0

    /// Adds a line, or counts it when the list is full.
    mutating func add(_ line: String) {
        if kept.count < Metalink.Limits.warnings { kept.append(line) } else { dropped += 1 }
    }

    /// Adds the lines of `other`, each after `prefix`, and counts those it dropped.
    mutating func add(_ other: Warnings, prefix: String) {
        for line in other.kept { add(prefix + line) }
        dropped += other.dropped
    }

    /// The kept lines, and a last one counting the dropped ones.
    var lines: [String] {
        dropped == 0 ? kept : kept + ["\(dropped) more warnings not shown"]
    }
}
