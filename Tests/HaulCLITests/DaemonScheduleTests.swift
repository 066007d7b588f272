import Foundation
import HaulDaemon
import HaulJSON
import HaulTestSupport
import Testing
@testable import HaulCLI

/// `--limit-schedule` as `haul daemon` reads it, without a process.
@Suite struct DaemonScheduleArgumentsTests {
    static func options(_ arguments: [String]) throws -> DaemonOptions? {
        guard case .daemon(let options) = try ArgumentParser.parse(["daemon", "--dir=/d"] + arguments) else { return nil }
        return options
    }

    /// The schedule the arguments give, as it is written back.
    static func schedule(_ arguments: [String]) throws -> String? {
        try options(arguments).map { String(describing: $0.limitSchedule) }
    }

    @Test func theScheduleIsReadIntoTheOptions() throws {
        #expect(try Self.schedule([]) == "")
        #expect(try Self.schedule(["--limit-schedule", "sat+sun 00:00-24:00=0, Mon-Fri 9:00-18:00=2m"])
            == "Sat-Sun 00:00-24:00=0, Mon-Fri 09:00-18:00=2M")
        #expect(try Self.schedule(["--limit-schedule=Mon 01:00-02:00=1K", "--limit-schedule="]) == "",
                "an empty value (the last given wins) is no schedule")
    }

    @Test func aMistakeIsAUsageErrorNamingItsEntry() {
        #expect(throws: UsageError("invalid value for --limit-schedule: entry 2 (\"Sat\"): 'Sat' is only days: commas separate entries, "
                                   + "so days are joined with + (such as Sat+Sun)")) {
            try Self.options(["--limit-schedule=Mon 09:00-10:00=1M, Sat,Sun 10:00-12:00=1M"])
        }
        #expect(throws: UsageError("invalid value for --limit-schedule: entry 1 (\"Mon 09:00-18:00\"): expected =RATE after the times, "
                                   + "such as 09:00-18:00=2M")) {
            try Self.options(["--limit-schedule=Mon 09:00-18:00"])
        }
    }

    @Test func theHelpShowsTheOption() {
        let help = HelpText.daemon
        #expect(help.contains("--limit-schedule=SCHEDULE"))
    }
}

/// `haul daemon --limit-schedule` as a process: the schedule read in the zone of `TZ`, shown and
/// changed over the RPC, a wrong one refused (exit 2 at the start, a JSON-RPC error later).
@Suite(.throttled) struct DaemonScheduleTests {
    static let berlin = TimeZone(identifier: "Europe/Berlin")!

    @Test func theScheduleIsInTheLocalTimeOfTZAndChangesOverTheRPC() async throws {
        try await withTemporaryDirectory { (dir) async throws in
            let daemon = try await DaemonProcess(in: dir, ["--limit-schedule=Mon-Fri 09:00-18:00=2M, 23:00-07:00=0"],
                                                 environment: ["TZ": "Europe/Berlin"])
            let options = try #require(try daemon.call("aria2.getGlobalOption").object)
            #expect(options["haul-limit-schedule"]?.string == "Mon-Fri 09:00-18:00=2M, 23:00-07:00=0")
            // Without --limit-rate, 23:00 and 07:00 change nothing: the next change is a weekday's 09:00 or 18:00, Berlin's.
            let next = try #require(options["haul-limit-next-change"]?.string)
            let date = try #require(ISO8601DateFormatter().date(from: next), "\(next)")
            let offset = Self.berlin.secondsFromGMT(for: date)
            #expect(next.hasSuffix(offset == 7200 ? "+02:00" : "+01:00"), "\(next)")
            #expect(date > Date() && date < Date().addingTimeInterval(8 * 86_400), "\(next)")
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = Self.berlin
            let wall = calendar.dateComponents([.weekday, .hour, .minute], from: date)
            #expect((2...6).contains(wall.weekday!) && [9, 18].contains(wall.hour!) && wall.minute == 0, "\(next)")
            let working = wall.hour == 18
            #expect(options["max-overall-download-limit"]?.string == (working ? "2097152" : "0"))
            #expect(options["haul-limit-next-rate"]?.string == (working ? "0" : "2097152"))
            #expect(daemon.log.contains(working ? "rate limit 2.0 MiB/s until \(next), then no limit (schedule: Mon-Fri"
                                                : "no rate limit until \(next), then 2.0 MiB/s (schedule: Mon-Fri"), "\(daemon.log)")

            // A wrong schedule over the RPC: an error, and nothing changes.
            #expect {
                try daemon.call("aria2.changeGlobalOption", [["haul-limit-schedule": "Mon 09:00-18:00=2M, Sun 7:00-8:00=lots"]])
            } throws: { error in
                (error as? DaemonClientError)?.message.hasPrefix("We encountered a problem while processing the option "
                    + "'--haul-limit-schedule': entry 2 (\"Sun 7:00-8:00=lots\"): 'lots' is not a") == true
            }
            #expect(try daemon.call("aria2.getGlobalOption").object?["haul-limit-schedule"]?.string == "Mon-Fri 09:00-18:00=2M, 23:00-07:00=0")

            // A new one applies at once.
            #expect(try daemon.call("aria2.changeGlobalOption", [["haul-limit-schedule": "00:00-24:00=3M"]]) == "OK")
            let changed = try #require(try daemon.call("aria2.getGlobalOption").object)
            #expect(changed["max-overall-download-limit"]?.string == "3145728" && changed["haul-limit-next-change"]?.string == "")
            daemon.send(SIGTERM)
            #expect(await daemon.waitForExit() == 0)
        }
    }

    @Test func aWrongScheduleOnTheCommandLineExitsTwoBeforeAnything() async throws {
        try await withTemporaryDirectory { (dir) async throws in
            let outcome = try await haul(["daemon", "--dir=\(dir.path)/d", "--state=\(dir.path)/s.db", "--listen=127.0.0.1:0",
                                          "--limit-schedule=Mon-Fri 09:00-18:00=2M, 18:00-09:00"], in: dir)
            #expect(outcome.status == 2)
            #expect(outcome.standardError == "haul: invalid value for --limit-schedule: entry 2 (\"18:00-09:00\"): expected =RATE after the times, "
                + "such as 09:00-18:00=2M\nTry 'haul --help' for more information.\n")
            #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("s.db").path), "refused before anything")
        }
    }
}
