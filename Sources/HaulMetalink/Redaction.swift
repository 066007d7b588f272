/// Document text made safe to put in a one-line message.
enum Redaction {
    /// `text` with every scalar that could break or disguise a line (C0 and C1 controls, DEL,
    /// line and paragraph separators, bidirectional controls) shown as `?`, and cut to `limit`
    /// scalars with a trailing `…`.
    static func safe(_ text: some StringProtocol, limit: Int = 80) -> String {
        var out = String.UnicodeScalarView()
        for (count, scalar) in text.unicodeScalars.enumerated() {
            guard count < limit else {
                out.append("…")
                break
            }
            out.append(isSafe(scalar) ? scalar : "?")
        }
        return String(out)
    }

    /// Whether `scalar` is shown as itself in a message.
    static func isSafe(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F: false
        case 0x200E, 0x200F, 0x2028, 0x2029, 0x202A...0x202E, 0x2066...0x2069: false
        default: true
        }
    }
}
