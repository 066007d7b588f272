/// The check every file name from a document passes before it is kept.
extension Metalink.File {
    /// Why `name` may not be used as a relative path below a download folder, or `nil` when it
    /// may.
    ///
    /// Checked by Unicode scalars, never by `Character` (`"/\u{338}"` is one `Character` and
    /// still starts with the separator): not empty, at most ``Metalink/Limits/fileNameBytes``
    /// bytes, not starting with `/`, no empty, `.` or `..` component, no component over
    /// ``Metalink/Limits/fileNameComponentBytes`` bytes, no `\`, no C0 or C1 control or DEL.
    ///
    /// - Parameter name: the `name` attribute of a `<file>`, as given.
    /// - Returns: a short reason (`"it is absolute"`), or `nil`.
    public static func nameProblem(_ name: String) -> String? {
        guard !name.isEmpty else { return "it is empty" }
        guard name.utf8.count <= Metalink.Limits.fileNameBytes else {
            return "it is longer than \(Metalink.Limits.fileNameBytes) bytes"
        }
        if let scalar = name.unicodeScalars.first(where: isForbidden) {
            return scalar == "\\" ? "it has a backslash" : "it has the control character U+\(hex(scalar))"
        }
        guard name.unicodeScalars.first != "/" else { return "it is absolute" }
        for component in name.unicodeScalars.split(separator: "/", omittingEmptySubsequences: false) {
            if component.isEmpty { return "it has an empty component" }
            if component.elementsEqual(["."]) || component.elementsEqual([".", "."]) {
                return "it has a '.' or '..' component"
            }
            if String(String.UnicodeScalarView(component)).utf8.count > Metalink.Limits.fileNameComponentBytes {
                return "a component is longer than \(Metalink.Limits.fileNameComponentBytes) bytes"
            }
        }
        return nil
    }

    /// Whether `scalar` may never be in a name: C0 and C1 controls, DEL, and the backslash.
    static func isForbidden(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F, 0x5C: true
        default: false
        }
    }

    /// The scalar's value as four or more uppercase hex digits.
    static func hex(_ scalar: Unicode.Scalar) -> String {
        let digits = String(scalar.value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }
}
