/// Reading a ``LimitSchedule`` from its text, byte by byte (the text may come from anyone who
/// holds the daemon's secret): every mistake names its entry and what is wrong with it.
extension LimitSchedule {
    /// Why a schedule's text was refused: the entry (counted from 1) and what is wrong with it.
    public struct ParseError: Error, Sendable, Equatable, CustomStringConvertible {
        /// The entry, counted from 1; `nil` when the mistake is the schedule's as a whole.
        public var entry: Int?
        /// The entry's text as given, control characters escaped, cut to 60 characters.
        public var entryText: String
        /// What is wrong, in one sentence without its entry.
        public var problem: String

        /// `entry 2 ("Sat 25:00-07:00=1M"): '25:00' is not a time: ...`.
        public var description: String {
            guard let entry else { return problem }
            return "entry \(entry) (\"\(entryText)\"): \(problem)"
        }
    }

    /// Reads a schedule: comma-separated entries `[DAYS ]HH:MM-HH:MM=RATE` (see ``LimitSchedule``).
    /// Spaces and tabs around entries, around `-` between the times and around `=` are allowed;
    /// blank text is no schedule.
    ///
    /// - Throws: ``ParseError`` naming the first entry that is wrong and why, or the schedule's
    ///   size when it has more than ``maximumEntries`` entries.
    public init(parsing text: String) throws(ParseError) {
        let bytes = Array(text.utf8)
        guard !Self.trimmed(bytes[...]).isEmpty else {
            self.init()
            return
        }
        let pieces = bytes.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false)
        guard pieces.count <= Self.maximumEntries else {
            throw ParseError(entry: nil, entryText: "",
                             problem: "the schedule has \(pieces.count) entries; it holds at most \(Self.maximumEntries)")
        }
        var coverage = WeekCoverage()
        var entries: [Entry] = []
        for (index, piece) in pieces.enumerated() {
            let fail = { (problem: String) in ParseError(entry: index + 1, entryText: Self.quoted(piece), problem: problem) }
            let entry: Entry
            do throws(EntryProblem) {
                entry = try Self.entry(Self.trimmed(piece))
            } catch {
                throw fail(error.problem)
            }
            if let owners = coverage.add(entry, index: index) {
                let names = owners.map { String($0 + 1) }
                let who = names.count == 1 ? "entry \(names[0]) covers" : "entries \(names.dropLast().joined(separator: ", ")) and \(names.last!) cover"
                throw fail("it never applies: \(who) all of it (where windows overlap, the first listed wins)")
            }
            entries.append(entry)
        }
        self.init(entries)
    }

    /// What is wrong with one entry (its number is added by the caller).
    struct EntryProblem: Error {
        let problem: String
        init(_ problem: String) { self.problem = problem }
    }

    /// One entry, trimmed: `[DAYS ]HH:MM-HH:MM=RATE`.
    static func entry(_ bytes: ArraySlice<UInt8>) throws(EntryProblem) -> Entry {
        guard !bytes.isEmpty else { throw EntryProblem("it is empty (two commas in a row, or one at an end)") }
        guard let equals = bytes.firstIndex(of: UInt8(ascii: "=")) else {
            if (try? days(bytes)) != nil {
                throw EntryProblem("'\(quoted(bytes))' is only days: commas separate entries, so days are joined with + (such as Sat+Sun)")
            }
            throw EntryProblem("expected =RATE after the times, such as 09:00-18:00=2M")
        }
        let rate = try Self.rate(trimmed(bytes[(equals + 1)...]))
        let left = trimmed(bytes[..<equals])
        var days = Days.all
        var times = left
        if let first = left.first, isLetter(first) {
            let end = left.firstIndex(where: isBlank) ?? left.endIndex
            days = try Self.days(left[..<end])
            times = trimmed(left[end...])
            guard !times.isEmpty else { throw EntryProblem("expected a time range such as 09:00-18:00 after the days") }
        }
        guard !times.isEmpty else { throw EntryProblem("expected a time range such as 09:00-18:00 before '='") }
        let (start, end) = try Self.window(times)
        return Entry(days: days, start: start, end: end, rate: rate)
    }

    /// `Mon`, `Mon-Fri`, `Sat+Sun`, `Mon-Wed+Fri`: names in any case.
    static func days(_ bytes: ArraySlice<UInt8>) throws(EntryProblem) -> Days {
        var days = Days()
        for part in bytes.split(separator: UInt8(ascii: "+"), omittingEmptySubsequences: false) {
            let ends = part.split(separator: UInt8(ascii: "-"), omittingEmptySubsequences: false)
            guard ends.count <= 2, let first = day(ends[0]), let last = ends.count == 2 ? day(ends[1]) : first else {
                throw EntryProblem("'\(quoted(part))' is not a day: expected Mon, Tue, Wed, Thu, Fri, Sat or Sun, "
                                   + "a range such as Mon-Fri, or several joined by + such as Sat+Sun")
            }
            var index = first
            while true {
                days.insert(Days(index: index))
                if index == last { break }
                index = (index + 1) % 7
            }
        }
        return days
    }

    /// The index of a day's three-letter name in any case (0 Monday), or `nil`.
    static func day(_ bytes: ArraySlice<UInt8>) -> Int? {
        guard bytes.count == 3 else { return nil }
        let lower = bytes.map { $0 >= 0x41 && $0 <= 0x5A ? $0 + 0x20 : $0 }
        return Days.names.firstIndex { Array($0.lowercased().utf8) == lower }
    }

    /// `HH:MM-HH:MM`: the start and end in minutes after midnight.
    static func window(_ bytes: ArraySlice<UInt8>) throws(EntryProblem) -> (Int, Int) {
        guard let dash = bytes.firstIndex(of: UInt8(ascii: "-")) else {
            throw EntryProblem("'\(quoted(bytes))' is not a time range: expected HH:MM-HH:MM, such as 09:00-18:00")
        }
        let start = try time(trimmed(bytes[..<dash])), end = try time(trimmed(bytes[(dash + 1)...]))
        guard start < 1440 else { throw EntryProblem("a window cannot start at 24:00, which ends a day") }
        guard start != end else {
            throw EntryProblem("the window is empty: it starts and ends at \(text(minutes: start)) (00:00-24:00 is a whole day)")
        }
        // An end at 00:00 is the midnight that ends the start's day: 24:00.
        return (start, end == 0 ? 1440 : end)
    }

    /// `H:MM` or `HH:MM` in minutes after midnight; `24:00` is 1440.
    static func time(_ bytes: ArraySlice<UInt8>) throws(EntryProblem) -> Int {
        let parts = bytes.split(separator: UInt8(ascii: ":"), omittingEmptySubsequences: false)
        guard parts.count == 2, (1...2).contains(parts[0].count), parts[1].count == 2,
              let hours = number(parts[0]), let minutes = number(parts[1]) else {
            throw EntryProblem("'\(quoted(bytes))' is not a time: expected HH:MM, such as 09:00")
        }
        guard minutes < 60 else { throw EntryProblem("'\(quoted(bytes))' is not a time: the minutes are 00 to 59") }
        guard hours < 24 || (hours == 24 && minutes == 0) else {
            throw EntryProblem("'\(quoted(bytes))' is not a time: the hour is 00 to 23 (24:00 ends a day)")
        }
        return hours * 60 + minutes
    }

    /// Bytes per second as `--limit-rate` takes them (a number, a fraction allowed, then `K`, `M`
    /// or `G`, 1024-based); `0` is no limit (`nil`).
    static func rate(_ bytes: ArraySlice<UInt8>) throws(EntryProblem) -> Int64? {
        let refused = EntryProblem("'\(quoted(bytes))' is not a rate: expected bytes per second such as 500K, 2M or 1G, or 0 for no limit")
        var digits = bytes
        var shift = 0
        switch digits.last.map({ $0 | 0x20 }) {
        case UInt8(ascii: "k")?: shift = 10
        case UInt8(ascii: "m")?: shift = 20
        case UInt8(ascii: "g")?: shift = 30
        default: break
        }
        if shift > 0 { digits = digits.dropLast() }
        let parts = digits.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), parts.allSatisfy({ !$0.isEmpty && $0.count <= 15 && $0.allSatisfy(isDigit) }),
              let value = Double(String(decoding: digits, as: UTF8.self)) else { throw refused }
        let rate = (value * Double(Int64(1) << shift)).rounded()
        guard rate <= Double(Int64(1) << 40) else { throw EntryProblem("'\(quoted(bytes))' is above the largest rate, 1024G") }
        guard value == 0 || rate >= 1 else { throw EntryProblem("'\(quoted(bytes))' is below 1 byte per second (0 means no limit)") }
        return rate == 0 ? nil : Int64(rate)
    }

    /// Decimal digits as a number (at most two, so never too large).
    private static func number(_ bytes: ArraySlice<UInt8>) -> Int? {
        guard bytes.allSatisfy(isDigit) else { return nil }
        return bytes.reduce(0) { $0 * 10 + Int($1 - 0x30) }
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }
    private static func isLetter(_ byte: UInt8) -> Bool { (byte | 0x20) >= 0x61 && (byte | 0x20) <= 0x7A }
    private static func isBlank(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 }

    /// `bytes` without the spaces and tabs at either end.
    static func trimmed(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        guard let first = bytes.firstIndex(where: { !isBlank($0) }), let last = bytes.lastIndex(where: { !isBlank($0) }) else { return [] }
        return bytes[first...last]
    }

    /// Text from the caller to quote in an error: decoded as UTF-8 (invalid bytes replaced), each
    /// control or format character written `\u{…}`, cut to 60 characters with `…`.
    static func quoted(_ bytes: ArraySlice<UInt8>) -> String {
        var text = ""
        var count = 0
        for scalar in String(decoding: trimmed(bytes), as: UTF8.self).unicodeScalars {
            guard count < 60 else { return text + "…" }
            switch scalar.properties.generalCategory {
            case .control, .format, .lineSeparator, .paragraphSeparator: text += "\\u{" + String(scalar.value, radix: 16) + "}"
            default: text.unicodeScalars.append(scalar)
            }
            count += 1
        }
        return text
    }
}

/// Which entry first covers each minute of the week (by the clock, Monday 00:00 first), to find an
/// entry that earlier ones cover wholly.
struct WeekCoverage {
    private var owner = [Int16](repeating: -1, count: 7 * 1440)

    /// Marks the minutes `entry` covers that no earlier entry does.
    ///
    /// - Returns: `nil` when the entry covers a minute no earlier entry does; else the earlier
    ///   entries (their indexes, in order) that cover all of it, and nothing is marked.
    mutating func add(_ entry: LimitSchedule.Entry, index: Int) -> [Int]? {
        let minutes = Self.minutes(of: entry)
        guard minutes.allSatisfy({ owner[$0] >= 0 }) else {
            for minute in minutes where owner[minute] < 0 { owner[minute] = Int16(index) }
            return nil
        }
        return Set(minutes.map { Int(owner[$0]) }).sorted()
    }

    /// The minutes of the week the entry's windows cover (a window that crosses Sunday's
    /// midnight goes on into Monday).
    static func minutes(of entry: LimitSchedule.Entry) -> [Int] {
        let length = entry.crossesMidnight ? 1440 - entry.start + entry.end : entry.end - entry.start
        var minutes: [Int] = []
        for day in 0..<7 where entry.days.contains(index: day) {
            let first = day * 1440 + entry.start
            minutes += (first..<first + length).map { $0 % (7 * 1440) }
        }
        return minutes
    }
}
