import Testing
@testable import HaulService

/// `--limit-schedule` and `haul-limit-schedule` text: what reads, the one form it is written back
/// in, and a precise error for each kind of mistake (read by bytes, never by `Character`).
@Suite struct LimitScheduleParseTests {
    typealias Entry = LimitSchedule.Entry
    static let weekdays = LimitSchedule.Days(rawValue: 0b0011111)

    @Test func theIssuesExampleReadsAsTwoWindows() throws {
        let schedule = try LimitSchedule(parsing: "Mon-Fri 09:00-18:00=2M, 23:00-07:00=0")
        #expect(schedule.entries == [Entry(days: Self.weekdays, start: 9 * 60, end: 18 * 60, rate: 2 << 20),
                                     Entry(days: .all, start: 23 * 60, end: 7 * 60, rate: nil)])
        #expect(schedule.entries[1].crossesMidnight && !schedule.entries[0].crossesMidnight)
        #expect(schedule.description == "Mon-Fri 09:00-18:00=2M, 23:00-07:00=0")
    }

    @Test(arguments: [
        ("sat+SUN 00:00-24:00=1.5m", "Sat-Sun 00:00-24:00=1536K"),
        ("Fri-Mon 9:00 - 17:30 = 512k", "Mon+Fri-Sun 09:00-17:30=512K"),
        ("  Wed 22:00-02:00=1048576 ,\tThu 01:00-03:00=100  ", "Wed 22:00-02:00=1M, Thu 01:00-03:00=100"),
        ("Mon+Mon-Tue\t10:00-11:00=1g", "Mon-Tue 10:00-11:00=1G"),
        ("Sun-Sat 10:00-11:00=3", "10:00-11:00=3"),
        ("Mon-Wed+Fri 00:00-00:01=0.5K", "Mon-Wed+Fri 00:00-00:01=512"),
        ("23:59-24:00=1024G", "23:59-24:00=1024G"),
        ("Mon-Fri 09:00-18:00=2M, 23:00-00:00=0", "Mon-Fri 09:00-18:00=2M, 23:00-24:00=0"),   // Fuzz/Regressions: an end at 00:00
        ("Mon-Fri 09:00-18:00=512K, Sat+Sun 10:00-22:00=2M, 01:00-07:00=0",   // docs/DAEMON.md
         "Mon-Fri 09:00-18:00=512K, Sat-Sun 10:00-22:00=2M, 01:00-07:00=0"),
        ("", ""),
        (" \t ", ""),
    ])
    func formsAreReadAndWrittenBackInOneForm(text: String, written: String) throws {
        let schedule = try LimitSchedule(parsing: text)
        #expect(schedule.description == written)
        #expect(try LimitSchedule(parsing: schedule.description) == schedule)
        #expect(schedule.isEmpty == written.isEmpty)
    }

    @Test(arguments: [
        ("Mon-Fri 09:00-18:00=2M,", #"entry 2 (""): it is empty (two commas in a row, or one at an end)"#),
        ("1:00-2:00=1M,,3:00-4:00=1M", #"entry 2 (""): it is empty (two commas in a row, or one at an end)"#),
        ("Mon-Fri 09:00-18:00", #"entry 1 ("Mon-Fri 09:00-18:00"): expected =RATE after the times, such as 09:00-18:00=2M"#),
        ("Mon-Fri,Sat 09:00-18:00=1M",
         #"entry 1 ("Mon-Fri"): 'Mon-Fri' is only days: commas separate entries, so days are joined with + (such as Sat+Sun)"#),
        ("Mnd 09:00-18:00=1M", #"entry 1 ("Mnd 09:00-18:00=1M"): 'Mnd' is not a day: expected Mon, Tue, Wed, Thu, Fri, Sat or Sun, "#
            + "a range such as Mon-Fri, or several joined by + such as Sat+Sun"),
        ("Mon++Fri 09:00-18:00=1M", #"entry 1 ("Mon++Fri 09:00-18:00=1M"): '' is not a day: expected Mon, Tue, Wed, Thu, Fri, Sat or Sun, "#
            + "a range such as Mon-Fri, or several joined by + such as Sat+Sun"),
        ("Monday 09:00-18:00=1M", #"entry 1 ("Monday 09:00-18:00=1M"): 'Monday' is not a day: expected Mon, Tue, Wed, Thu, Fri, Sat or Sun, "#
            + "a range such as Mon-Fri, or several joined by + such as Sat+Sun"),
        ("Mon =1M", #"entry 1 ("Mon =1M"): expected a time range such as 09:00-18:00 after the days"#),
        ("=1M", #"entry 1 ("=1M"): expected a time range such as 09:00-18:00 before '='"#),
        ("Mon 09:00 18:00=1M", #"entry 1 ("Mon 09:00 18:00=1M"): '09:00 18:00' is not a time range: expected HH:MM-HH:MM, such as 09:00-18:00"#),
        ("09:00-25:00=1M", #"entry 1 ("09:00-25:00=1M"): '25:00' is not a time: the hour is 00 to 23 (24:00 ends a day)"#),
        ("09:60-10:00=1M", #"entry 1 ("09:60-10:00=1M"): '09:60' is not a time: the minutes are 00 to 59"#),
        ("9-10=1M", #"entry 1 ("9-10=1M"): '9' is not a time: expected HH:MM, such as 09:00"#),
        ("09:5-10:00=1M", #"entry 1 ("09:5-10:00=1M"): '09:5' is not a time: expected HH:MM, such as 09:00"#),
        ("24:00-01:00=1M", #"entry 1 ("24:00-01:00=1M"): a window cannot start at 24:00, which ends a day"#),
        ("09:00-09:00=1M", #"entry 1 ("09:00-09:00=1M"): the window is empty: it starts and ends at 09:00 (00:00-24:00 is a whole day)"#),
        ("09:00-18:00=2X", #"entry 1 ("09:00-18:00=2X"): '2X' is not a rate: expected bytes per second such as 500K, 2M or 1G, or 0 for no limit"#),
        ("09:00-18:00=", #"entry 1 ("09:00-18:00="): '' is not a rate: expected bytes per second such as 500K, 2M or 1G, or 0 for no limit"#),
        ("09:00-18:00=-1", #"entry 1 ("09:00-18:00=-1"): '-1' is not a rate: expected bytes per second such as 500K, 2M or 1G, or 0 for no limit"#),
        ("09:00-18:00=1.M", #"entry 1 ("09:00-18:00=1.M"): '1.M' is not a rate: expected bytes per second such as 500K, 2M or 1G, or 0 for no limit"#),
        ("09:00-18:00=2000G", #"entry 1 ("09:00-18:00=2000G"): '2000G' is above the largest rate, 1024G"#),
        ("09:00-18:00=0.1", #"entry 1 ("09:00-18:00=0.1"): '0.1' is below 1 byte per second (0 means no limit)"#),
        ("Mon 09:00-18:00=1M, Mon 10:00-11:00=2M",
         #"entry 2 ("Mon 10:00-11:00=2M"): it never applies: entry 1 covers all of it (where windows overlap, the first listed wins)"#),
        ("Mon 09:00-12:00=1M, Mon 12:00-18:00=2M, Mon 10:00-14:00=3M",
         #"entry 3 ("Mon 10:00-14:00=3M"): it never applies: entries 1 and 2 cover all of it (where windows overlap, the first listed wins)"#),
        ("Wed 22:00-02:00=1M, Thu 00:00-01:00=2M",
         #"entry 2 ("Thu 00:00-01:00=2M"): it never applies: entry 1 covers all of it (where windows overlap, the first listed wins)"#),
        ("Sun 23:00-01:00=1M, Mon 00:00-00:30=2M",
         #"entry 2 ("Mon 00:00-00:30=2M"): it never applies: entry 1 covers all of it (where windows overlap, the first listed wins)"#),
        ("00:00-24:00=1M, Sat 10:00-11:00=0",
         #"entry 2 ("Sat 10:00-11:00=0"): it never applies: entry 1 covers all of it (where windows overlap, the first listed wins)"#),
    ])
    func eachMistakeNamesItsEntryAndWhatIsWrong(text: String, message: String) {
        do {
            let schedule = try LimitSchedule(parsing: text)
            Issue.record("read as \(schedule)")
        } catch {
            #expect(error.description == message)
        }
    }

    @Test func windowsThatOverlapInPartRead() throws {
        let schedule = try LimitSchedule(parsing: "Mon 09:00-18:00=1M, Mon 08:00-10:00=2M, 17:00-08:00=0")
        #expect(schedule.entries.count == 3)
    }

    @Test func textIsReadByBytesAndQuotedSafely() {
        // One Character each ("n" + combining acute, "1M" + BEL), and more than the bytes a name or rate has.
        #expect(Self.message("Mon\u{301} 09:00-10:00=1M").hasPrefix("entry 1 (\"Mon\u{301} 09:00-10:00=1M\"): 'Mon\u{301}' is not a day"))
        #expect(Self.message("09:00-10:00=1M\u{7}") == #"entry 1 ("09:00-10:00=1M\u{7}"): '1M\u{7}' is not a rate: "#
            + "expected bytes per second such as 500K, 2M or 1G, or 0 for no limit")
        #expect(Self.message("\u{FF10}9:00-10:00=1M").contains("'\u{FF10}9:00' is not a time: expected HH:MM"))
        #expect(Self.message("09:00-10:00=1M\u{202E}x").contains(#"'1M\u{202e}x' is not a rate"#))
        #expect(Self.message("09:00\u{0}-10:00=1M").contains(#"'09:00\u{0}' is not a time"#))
        let long = "Mon 09:00-10:00=" + String(repeating: "9", count: 500)
        #expect(Self.message(long).hasPrefix("entry 1 (\"Mon 09:00-10:00=" + String(repeating: "9", count: 44) + "…\")"))
        #expect(Self.message(String(decoding: [0x4D, 0xFF, 0x6E] + Array(" 09:00-10:00=1M".utf8), as: UTF8.self))
            .contains("'M\u{FFFD}n' is not a day"))
    }

    @Test func aScheduleHoldsAtMostAHundredEntries() throws {
        let entries = (0..<100).map { "Mon \(LimitSchedule.text(minutes: $0 * 10))-\(LimitSchedule.text(minutes: $0 * 10 + 10))=1K" }
        #expect(try LimitSchedule(parsing: entries.joined(separator: ",")).entries.count == 100)
        #expect(Self.message(entries.joined(separator: ",") + ",Tue 00:00-01:00=1K")
            == "the schedule has 101 entries; it holds at most 100")
    }

    static func message(_ text: String) -> String {
        do {
            return "read as \(try LimitSchedule(parsing: text))"
        } catch {
            return error.description
        }
    }
}
