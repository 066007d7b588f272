import CHaulSys
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A relative path below a trusted root, made from untrusted text (a daemon's `dir` and `out`
/// options, a name a server proposes), checked component by component and opened relative to
/// the root's descriptor so that it can never reach outside the root.
///
/// The text is split and checked by Unicode scalars, never by `Character`: `"/\u{301}"` and
/// `"\u{600}/"` are one `Character` each, yet the kernel sees the `/` byte in them. A component
/// is refused (``Refusal``) when it
/// - is empty or longer than 255 UTF-8 bytes;
/// - contains NUL, a C0 control, DEL or a C1 control (U+0000–U+001F, U+007F–U+009F);
/// - contains `/` or a scalar whose compatibility form (NFKC, NFKD) contains `/`: U+FF0F
///   FULLWIDTH SOLIDUS, U+2100, U+2101, U+2105, U+2106 (℀ ℁ ℅ ℆);
/// - is made of dots only, counting the scalars whose compatibility form is dots only: U+2024
///   ONE DOT LEADER, U+2025, U+2026, U+FE19, U+FE30, U+FE52, U+FF0E. So `.`, `..`, `...`, `․․`
///   and `．．` are refused: no normalization form of an accepted component is `.` or `..`.
///   (The canonical forms, NFC and NFD, map no scalar to `/`, `.` or a control; the table of
///   compatibility forms is checked against Foundation's normalization by `ContainedPathTests`.)
///
/// In a folder, repeated, leading and trailing `/` are one separator, as the kernel reads them;
/// the empty folder is the root itself.
package struct ContainedPath: Sendable, Hashable {
    /// The checked components, outermost first (empty for the root itself).
    package let components: [String]

    /// Why a path was refused or could not be opened: one readable phrase, e.g. "the name '..'
    /// is only dots".
    package struct Refusal: Error, Sendable, CustomStringConvertible {
        /// What kind of refusal this is.
        package enum Reason: Sendable, Equatable {
            /// A rule of ``ContainedPath`` refused a component, or a component on disk is a
            /// symbolic link or not a folder.
            case unsafe
            /// The system refused an operation for another reason (this `errno`).
            case system(Int32)
        }
        package var reason: Reason = .unsafe
        package var description: String
    }

    /// Splits `folder` on `/` scalars and checks each component.
    ///
    /// - Parameter folder: a relative folder (`""` is the root).
    /// - Throws: ``Refusal`` when a component is refused.
    package init(folder: String) throws(Refusal) {
        var components: [String] = []
        for piece in folder.unicodeScalars.split(separator: "/", omittingEmptySubsequences: true) {
            let component = String(String.UnicodeScalarView(piece))
            try Self.check(component: component)
            components.append(component)
        }
        self.components = components
    }

    /// The components joined by `/` (`""` for the root).
    package var relative: String { components.joined(separator: "/") }

    /// The path of this folder below `root`.
    package func absolute(in root: String) -> String {
        guard !components.isEmpty else { return root }
        return (root.utf8.last == UInt8(ascii: "/") ? root : root + "/") + relative
    }
}

extension ContainedPath {
    /// Checks one component (a folder's or a file's name) against the rules of ``ContainedPath``.
    ///
    /// - Throws: ``Refusal`` naming the rule it breaks.
    package static func check(component: String) throws(Refusal) {
        guard !component.isEmpty else { throw Refusal(description: "an empty name") }
        guard component.utf8.count <= 255 else { throw Refusal(description: "a name longer than 255 bytes") }
        var onlyDots = true
        for scalar in component.unicodeScalars {
            if isControl(scalar) { throw Refusal(description: "the name '\(shown(component))' has a control character") }
            if isSeparatorLike(scalar) {
                throw Refusal(description: "the name '\(shown(component))' has a '/' or a character that normalizes to one")
            }
            if !isDotLike(scalar) { onlyDots = false }
        }
        if onlyDots { throw Refusal(description: "the name '\(shown(component))' is only dots") }
    }

    /// NUL, C0 controls, DEL and C1 controls.
    package static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }

    /// `/`, and the scalars whose compatibility form contains `/`.
    package static func isSeparatorLike(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x2F, 0xFF0F, 0x2100, 0x2101, 0x2105, 0x2106: true
        default: false
        }
    }

    /// `.`, and the scalars whose compatibility form is one or more dots.
    package static func isDotLike(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x2E, 0x2024, 0x2025, 0x2026, 0xFE19, 0xFE30, 0xFE52, 0xFF0E: true
        default: false
        }
    }

    /// A component as an error message shows it: controls as `\u{…}`, at most 64 scalars.
    static func shown(_ component: String) -> String {
        var text = ""
        for scalar in component.unicodeScalars.prefix(64) {
            text += isControl(scalar) ? "\\u{\(String(scalar.value, radix: 16))}" : String(scalar)
        }
        return component.unicodeScalars.count > 64 ? text + "…" : text
    }
}

extension ContainedPath {
    /// Opens the trusted root folder at `path` (links in it are followed: the root is the
    /// operator's choice).
    ///
    /// - Returns: the descriptor, which the caller closes.
    /// - Throws: ``Refusal`` with the system's reason.
    package static func openRoot(_ path: String) throws(Refusal) -> Int32 {
        let fd = open(path, O_RDONLY | haul_o_directory() | haul_o_cloexec())
        guard fd >= 0 else {
            let code = errno
            throw Refusal(reason: .system(code), description: "cannot open the folder '\(path)': \(errnoText(code))")
        }
        return fd
    }

    /// Opens this folder below the folder open at `root`, each component relative to its parent's
    /// descriptor with `O_NOFOLLOW | O_DIRECTORY`, so a symbolic link is never followed, even one
    /// that appeared after the folder was checked.
    ///
    /// - Parameters:
    ///   - root: the descriptor of the root (not closed).
    ///   - create: whether missing components are made (`mkdirat`, mode 0755 less the umask).
    /// - Returns: the folder's descriptor, which the caller closes.
    /// - Throws: ``Refusal``: `unsafe` when a component is a link or not a folder, `system` otherwise
    ///   (a missing component without `create`: `ENOENT`).
    package func openFolder(below root: Int32, create: Bool) throws(Refusal) -> Int32 {
        var parent = openat(root, ".", O_RDONLY | haul_o_directory() | haul_o_cloexec())
        guard parent >= 0 else { throw failure(errno, at: 0) }
        for (index, component) in components.enumerated() {
            if create, mkdirat(parent, component, 0o755) != 0, errno != EEXIST {
                let code = errno
                close(parent)
                throw failure(code, at: index)
            }
            let next = openat(parent, component, O_RDONLY | haul_o_directory() | haul_o_nofollow() | haul_o_cloexec())
            let code = errno
            close(parent)
            guard next >= 0 else { throw failure(code, at: index) }
            parent = next
        }
        return parent
    }

    /// Checks the components of this folder that exist below `root`: each is a folder, not a link
    /// (the missing ones are made later, as folders, by ``openFolder(below:create:)``).
    ///
    /// - Throws: ``Refusal``, as ``openFolder(below:create:)``'s.
    package func checkExisting(below root: Int32) throws(Refusal) {
        do {
            close(try openFolder(below: root, create: false))
        } catch where error.reason == .system(ENOENT) {
            return
        }
    }

    /// The refusal for `errno` `code` at the component `index`: a link (`ELOOP`) or something
    /// that is not a folder (`ENOTDIR`) is unsafe; anything else is the system's reason.
    private func failure(_ code: Int32, at index: Int) -> Refusal {
        let path = components.prefix(index + 1).map(Self.shown).joined(separator: "/")
        switch code {
        case ELOOP: return Refusal(description: "'\(path)' is a symbolic link")
        case ENOTDIR: return Refusal(description: "'\(path)' is not a folder")
        default: return Refusal(reason: .system(code), description: "cannot open the folder '\(path)': \(errnoText(code))")
        }
    }
}
