/// Numbers and text shaped for people: 1024-based sizes, speeds, times, terminal widths.
enum HumanFormat {
    /// `512 B`, `1.5 KiB`, `12.3 MiB`, `4.0 GiB` (1024-based, one decimal above bytes).
    static func bytes(_ count: Int64) -> String {
        let units = ["KiB", "MiB", "GiB", "TiB", "PiB"]
        guard count >= 1024 else { return "\(max(0, count)) B" }
        var value = Double(count) / 1024
        var unit = 0
        while value >= 1024 && unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        // 1023.96 KiB would print as "1024.0 KiB": show it as the next unit instead.
        if (value * 10).rounded() >= 10240 && unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        return oneDecimal(value) + " " + units[unit]
    }

    /// `4.5 MiB/s`; `0 B/s` for a speed that is not a positive finite number.
    static func speed(_ bytesPerSecond: Double) -> String {
        guard bytesPerSecond.isFinite, bytesPerSecond > 0 else { return "0 B/s" }
        return bytes(Int64(min(bytesPerSecond, 1e18))) + "/s"
    }

    /// A time left or taken: `0:03`, `12:34`, `1:02:03` (capped at `99:59:59`); `--:--` when unknown.
    static func clock(_ seconds: Double?) -> String {
        guard let seconds, seconds.isFinite, seconds >= 0 else { return "--:--" }
        let total = min(Int(seconds.rounded(.up)), 99 * 3600 + 59 * 60 + 59)
        let hours = total / 3600, minutes = total / 60 % 60, secs = total % 60
        let mmss = twoDigits(minutes) + ":" + twoDigits(secs)
        if hours > 0 { return "\(hours):" + mmss }
        return "\(minutes):" + twoDigits(secs)
    }

    /// An elapsed time: `0.4s`, `6.1s`, then `1:02` from a minute on.
    static func elapsed(_ seconds: Double) -> String {
        guard seconds.isFinite, seconds >= 0 else { return "0.0s" }
        return seconds < 60 ? oneDecimal(seconds) + "s" : clock(seconds)
    }

    /// `12.3` from 12.345 (rounded half up), without Foundation's `String(format:)`.
    static func oneDecimal(_ value: Double) -> String {
        let tenths = Int64((value * 10).rounded())
        return "\(tenths / 10).\(tenths % 10)"
    }

    private static func twoDigits(_ value: Int) -> String {
        value < 10 ? "0\(value)" : "\(value)"
    }

    // MARK: - Terminal text

    /// The text with control characters (which could move the cursor or change colours)
    /// replaced by `?`.
    static func printable(_ text: String) -> String {
        if text.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) { return text }
        return String(String.UnicodeScalarView(text.unicodeScalars.map { scalar in
            scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) ? "?" : scalar
        }))
    }

    /// Columns `text` takes in a terminal: 0 for combining marks, 2 for East Asian wide and
    /// emoji characters, 1 otherwise (an estimate that errs on the wide side).
    static func displayWidth(_ text: String) -> Int {
        text.unicodeScalars.reduce(0) { $0 + columns($1) }
    }

    /// Cuts `text` to at most `width` columns, ending with `…` when something was cut.
    static func truncate(_ text: String, toWidth width: Int) -> String {
        guard displayWidth(text) > width else { return text }
        guard width > 0 else { return "" }
        var result = String.UnicodeScalarView()
        var used = 0
        for scalar in text.unicodeScalars {
            let needed = columns(scalar)
            if used + needed > width - 1 { break }
            result.append(scalar)
            used += needed
        }
        return String(result) + "…"
    }

    private static func columns(_ scalar: Unicode.Scalar) -> Int {
        let value = scalar.value
        switch scalar.properties.generalCategory {
        case .nonspacingMark, .enclosingMark, .format: return 0
        default: break
        }
        let wideRanges: [ClosedRange<UInt32>] = [
            0x1100...0x115F, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF,
            0xA000...0xA4CF, 0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE30...0xFE4F, 0xFF00...0xFF60,
            0xFFE0...0xFFE6, 0x1F300...0x1F64F, 0x1F900...0x1F9FF, 0x20000...0x3FFFD,
        ]
        return wideRanges.contains(where: { $0.contains(value) }) ? 2 : 1
    }
}
