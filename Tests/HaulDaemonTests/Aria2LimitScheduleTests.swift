import Foundation
import Haul
import HaulJSON
import HaulService
import HaulTestSupport
import Testing
@testable import HaulDaemon

/// `haul-limit-schedule` and its kin over aria2's `getGlobalOption` and `changeGlobalOption`, on
/// a real service, with the clock fixed on Monday 2025-06-02 10:00 UTC.
@Suite(.throttled) struct Aria2LimitScheduleTests {
    struct FixedClock: WallClock {
        let date: Date
        func now() -> Date { date }
    }

    static let mebibyte: Int64 = 1 << 20

    /// An RPC over a service whose engine starts at `--limit-rate=1M`, with `schedule`.
    static func withRPC(schedule: String, _ body: (Aria2RPC, DownloadService) throws -> Void) throws {
        try withTemporaryDirectory { dir in
            var engine = Downloader.Configuration()
            engine.rateLimit = mebibyte
            let service = try DownloadService(configuration: .init(root: dir.appendingPathComponent("root"),
                                                                   stateFile: dir.appendingPathComponent("state.db"), downloader: engine))
            defer { service.shutDown() }
            let limits = RateScheduler(schedule: try LimitSchedule(parsing: schedule), outside: mebibyte,
                                       zone: FixedTimeZone(secondsEastOfUTC: 0),
                                       clock: FixedClock(date: Date(timeIntervalSince1970: 1_748_858_400))) { service.setRateLimit($0.rate) }
            limits.update()
            let rpc = Aria2RPC(service: service, settings: .init(secret: "sekret", listen: ListenAddress(host: "127.0.0.1", port: 6800),
                                                                 connections: 4), limits: limits, onShutdown: { _ in })
            try body(rpc, service)
        }
    }

    static func options(_ rpc: Aria2RPC) -> [String: String] {
        let object = Aria2RPCTests.result(rpc, "aria2.getGlobalOption").object?.members ?? []
        return Dictionary(uniqueKeysWithValues: object.map { ($0.key, $0.value.string ?? "not a string") })
    }

    static func change(_ rpc: Aria2RPC, _ options: JSONValue) -> (Int, JSONValue) {
        Aria2RPCTests.call(rpc, "aria2.changeGlobalOption", [options])
    }

    @Test func getGlobalOptionShowsTheScheduleTheRateInForceAndTheNextChange() throws {
        try Self.withRPC(schedule: "mon-fri 9:00-18:00=2048k, 23:00-07:00=0") { rpc, service in
            let options = Self.options(rpc)
            #expect(options["haul-limit-schedule"] == "Mon-Fri 09:00-18:00=2M, 23:00-07:00=0")
            #expect(options["max-overall-download-limit"] == "2097152" && service.rateLimit == 2 * Self.mebibyte)
            #expect(options["haul-limit-rate"] == "1048576")
            #expect(options["haul-limit-next-change"] == "2025-06-02T18:00:00+00:00" && options["haul-limit-next-rate"] == "1048576")
            #expect(options["max-concurrent-downloads"] == "4", "aria2's keys are still there")
        }
    }

    @Test func changeGlobalOptionSetsTheScheduleAndARateByHandThatHoldsUntilItsNextChange() throws {
        try Self.withRPC(schedule: "") { rpc, service in
            #expect(Self.options(rpc)["haul-limit-schedule"] == "" && Self.options(rpc)["haul-limit-next-change"] == "")
            #expect(Self.change(rpc, ["haul-limit-schedule": "Sat+Sun 00:00-24:00=0, 09:00-18:00=1.5M"]).1.object?["result"] == "OK")
            #expect(Self.options(rpc)["haul-limit-schedule"] == "Sat-Sun 00:00-24:00=0, 09:00-18:00=1536K")
            #expect(service.rateLimit == 1536 << 10)
            // By hand: at once, until the schedule next changes the rate (18:00), and outside the windows from
            // then on: at 18:00 the rate stays, and the next change is Tuesday's window.
            #expect(Self.change(rpc, ["max-overall-download-limit": "512K"]).0 == 200)
            #expect(service.rateLimit == 512 << 10)
            let options = Self.options(rpc)
            #expect(options["max-overall-download-limit"] == "524288" && options["haul-limit-rate"] == "524288")
            #expect(options["haul-limit-next-change"] == "2025-06-03T09:00:00+00:00" && options["haul-limit-next-rate"] == "1572864")
            // Both in one call: the schedule first, then the rate by hand over it.
            #expect(Self.change(rpc, ["max-overall-download-limit": "100", "haul-limit-schedule": "10:00-11:00=5M"]).0 == 200)
            #expect(service.rateLimit == 100 && Self.options(rpc)["haul-limit-next-change"] == "2025-06-03T10:00:00+00:00")
            // An empty schedule is none: the rate outside the windows applies.
            #expect(Self.change(rpc, ["haul-limit-schedule": ""]).0 == 200)
            #expect(Self.options(rpc)["haul-limit-schedule"] == "" && Self.options(rpc)["haul-limit-next-change"] == "")
            #expect(service.rateLimit == 100)
        }
    }

    @Test func aBadScheduleIsAJSONRPCErrorAndChangesNothing() throws {
        try Self.withRPC(schedule: "Mon-Fri 09:00-18:00=2M") { rpc, service in
            let before = Self.options(rpc)
            let (status, reply) = Self.change(rpc, ["max-concurrent-downloads": "7", "max-overall-download-limit": "1K",
                                                    "haul-limit-schedule": "Mon 09:00-18:00=1M, Sun 25:00-26:00=1M"])
            #expect(status == 400)
            let error = try #require(reply.object?["error"]?.object)
            #expect(error["code"] == 1)
            #expect(error["message"]?.string == "We encountered a problem while processing the option '--haul-limit-schedule': "
                + "entry 2 (\"Sun 25:00-26:00=1M\"): '25:00' is not a time: the hour is 00 to 23 (24:00 ends a day)")
            #expect(Self.options(rpc) == before)
            #expect(service.rateLimit == 2 * Self.mebibyte && service.maximumActiveDownloads == 4)
        }
    }

    @Test func theSecretInAScheduleIsNotEchoed() throws {
        try Self.withRPC(schedule: "") { rpc, _ in
            let message = Self.change(rpc, ["haul-limit-schedule": "Mon 09:00-10:00=sekret"]).1.object?["error"]?.object?["message"]?.string
            #expect(message?.contains("'***' is not a rate") == true, "\(message ?? "no error")")
        }
    }
}
