/// Text made safe for roff (man(7)): what ``ManPage`` writes every piece of prose through.
enum Roff {
    /// `text` as roff input that prints it as given: backslashes as `\e`, every hyphen as `\-`
    /// (so options copy and paste as typed), quotes as `\(aq` and `\(dq`, characters outside
    /// ASCII as `\[uXXXX]`, control characters (tabs, line ends included) as spaces, and
    /// `` `code` `` in bold. A line that begins with `.` or `'` would be a request: a leading
    /// `.` gets `\&` before it (and `'` is always `\(aq`).
    ///
    /// - Parameter text: one paragraph or phrase; the result holds no line end.
    static func escaped(_ text: String) -> String {
        let output = inline(text)
        return output.hasPrefix(".") ? "\\&" + output : output
    }

    /// `text` escaped as ``escaped(_:)`` does, but for the middle of a line (a leading `.` is
    /// left as it is).
    private static func inline(_ text: String) -> String {
        var output = ""
        var inCode = false
        for scalar in text.unicodeScalars {
            switch scalar {
            case "`":
                output += inCode ? "\\fR" : "\\fB"
                inCode.toggle()
            case "\\": output += "\\e"
            case "-": output += "\\-"
            case "'": output += "\\(aq"
            case "\"": output += "\\(dq"
            case "\u{0}"..<" ", "\u{7F}": output += " "
            case " "..."~": output.unicodeScalars.append(scalar)
            default: output += "\\[u" + hex(scalar.value) + "]"
            }
        }
        if inCode { output += "\\fR" }
        return output
    }

    /// `text` in bold, escaped.
    static func bold(_ text: String) -> String { "\\fB" + inline(text) + "\\fR" }

    /// `text` in italics, escaped.
    static func italic(_ text: String) -> String { "\\fI" + inline(text) + "\\fR" }

    /// A usage line (`haul daemon --dir=DIR [OPTION]...`) in the manual's synopsis style: command
    /// words and options in bold, the placeholders (upper-case words) in italics, the rest
    /// (brackets, `|`, `...`) in roman.
    static func synopsis(_ line: String) -> String {
        var output = ""
        var word = ""
        func flush() {
            guard !word.isEmpty else { return }
            output += word.unicodeScalars.allSatisfy({ ("A"..."Z").contains($0) }) ? italic(word) : bold(word)
            word = ""
        }
        for scalar in line.unicodeScalars {
            if ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar) || scalar == "-" {
                word.unicodeScalars.append(scalar)
            } else {
                flush()
                output += inline(String(scalar))
            }
        }
        flush()
        return output.hasPrefix(".") ? "\\&" + output : output
    }

    /// `value` as four or more upper-case hexadecimal digits, as `\[uXXXX]` wants it.
    private static func hex(_ value: UInt32) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }
}
