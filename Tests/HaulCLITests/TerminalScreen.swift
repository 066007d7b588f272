/// A tiny terminal emulator for tests: it applies the text and escape codes the progress
/// renderers write (`\r`, `\n`, `ESC[2K`, `ESC[nA`, `ESC[J`) to a grid of lines, so tests can
/// assert what the user would see rather than the bytes.
///
/// Writing past the last column is recorded in ``overflowed`` instead of wrapping (a line that
/// wraps would break the cursor arithmetic of a redraw).
struct TerminalScreen {
    /// The visible lines, top to bottom (the last may be the one the cursor is on).
    private(set) var lines: [[Character]] = [[]]
    /// The width; text written at or past it sets ``overflowed``.
    let width: Int
    /// Whether any character was written at or past column `width`.
    private(set) var overflowed = false
    /// Escape sequences the screen does not understand.
    private(set) var unknownEscapes: [String] = []
    private var row = 0
    private var column = 0

    /// Creates an empty screen `width` columns wide.
    init(width: Int) {
        self.width = width
    }

    /// The visible lines as strings, without a trailing empty line under the cursor.
    var text: [String] {
        var result = lines.map { String($0) }
        if result.last == "" { result.removeLast() }
        return result
    }

    /// Applies `output` as a terminal would.
    mutating func apply(_ output: String) {
        var characters = output[...]
        while let character = characters.first {
            characters = characters.dropFirst()
            switch character {
            case "\r": column = 0
            case "\n", "\r\n":
                row += 1
                column = 0
                if row == lines.count { lines.append([]) }
            case "\u{1B}":
                guard characters.first == "[" else { unknownEscapes.append("ESC"); continue }
                characters = characters.dropFirst()
                let digits = characters.prefix { $0.isNumber }
                characters = characters.dropFirst(digits.count)
                guard let command = characters.first else { unknownEscapes.append("ESC[" + digits); continue }
                characters = characters.dropFirst()
                let count = Int(digits) ?? 1
                switch (command, digits) {
                case ("A", _): row = max(0, row - count)
                case ("K", "2"): lines[row] = []
                case ("J", ""), ("J", "0"):
                    lines[row] = Array(lines[row].prefix(column))
                    lines.removeSubrange((row + 1)...)
                default: unknownEscapes.append("ESC[" + digits + String(command))
                }
            default:
                if column >= width { overflowed = true }
                while lines[row].count < column { lines[row].append(" ") }
                if column < lines[row].count {
                    lines[row][column] = character
                } else {
                    lines[row].append(character)
                }
                column += 1
            }
        }
    }
}
