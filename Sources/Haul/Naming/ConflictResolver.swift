/// What to do about a name that may already exist in the destination folder.
enum ConflictResolution: Equatable, Sendable {
    /// The name is free (or a free numbered name was found): download to it.
    case use(String)
    /// The name exists and the policy says to replace it once the download succeeds.
    case overwrite(String)
    /// The name exists and the policy says to leave it and not download.
    case skip(String)
    /// The name exists and the policy says to fail, or no free numbered name was found.
    case fail(String)
    /// The name (or, renaming, a numbered name before the first free one) is this download's
    /// file, finished by an earlier run: nothing to download.
    case finished(String)
}

/// Applies a ``ConflictPolicy`` to a chosen file name.
///
/// Pure: whether a name exists is asked through a closure, so tests use a set and the
/// downloader asks the file system (relative to the destination folder).
enum ConflictResolver: Sendable {
    /// The highest number tried by ``ConflictPolicy/rename`` (`name.9999.ext`).
    static let maximumAttempt = 9999

    /// Resolves a name against what exists.
    ///
    /// With ``ConflictPolicy/rename`` the candidates are `stem.1.ext`, `stem.2.ext`, … up
    /// to ``maximumAttempt``; a name without extension gets `name.1`, and `.tar.gz`-style
    /// extensions stay together (`a.tar.gz` → `a.1.tar.gz`). A candidate longer than
    /// ``FileNameSanitizer/maximumByteCount`` bytes has its stem shortened, never its
    /// extension or number.
    ///
    /// - Parameters:
    ///   - name: a sanitised file name.
    ///   - policy: what the user asked for (`--on-conflict`).
    ///   - exists: whether a name is taken in the destination folder.
    ///   - finished: whether a taken name holds this very download, finished by an earlier run
    ///     (asked only of taken names, in the order they are tried).
    /// - Returns: `.use(name)` when `name` is free, `.finished` for the first taken name found
    ///   finished, else the policy's outcome; `.fail(name)` when renaming finds no free candidate.
    static func resolve(name: String, policy: ConflictPolicy, exists: (String) -> Bool,
                        finished: (String) -> Bool = { _ in false }) -> ConflictResolution {
        guard exists(name) else { return .use(name) }
        if finished(name) { return .finished(name) }
        switch policy {
        case .overwrite: return .overwrite(name)
        case .skip: return .skip(name)
        case .fail: return .fail(name)
        case .rename: break
        }
        let parts = FileNameParts(name)
        for attempt in 1...maximumAttempt {
            let candidate = numbered(parts, attempt)
            if !exists(candidate) { return .use(candidate) }
            if finished(candidate) { return .finished(candidate) }
        }
        return .fail(name)
    }

    /// `stem.N.ext` (or `stem.N`), with the stem shortened to fit the byte limit.
    static func numbered(_ parts: FileNameParts, _ attempt: Int) -> String {
        let suffix = parts.fileExtension.map { ".\(attempt).\($0)" } ?? ".\(attempt)"
        let budget = FileNameSanitizer.maximumByteCount - suffix.utf8.count
        return parts.stem.truncatedToUTF8(maxBytes: budget) + suffix
    }
}
