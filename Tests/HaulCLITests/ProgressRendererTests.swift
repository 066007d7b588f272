import Haul
@testable import HaulCLI
import HaulTestSupport
import Testing

/// A progress snapshot of `done` of `total` bytes at 1 MiB/s.
private func snapshot(_ done: Int64, of total: Int64?) -> DownloadProgress {
    let eta = total.map { Double($0 - done) / 1_048_576 }
    return DownloadProgress(completedBytes: done, totalBytes: total, bytesPerSecond: 1_048_576, estimatedTimeRemaining: eta)
}

/// The visible lines of interactive output: split at redraws and newlines, escape codes removed.
private func visibleLines(_ text: String) -> [String] {
    text.replacing(ProgressRenderer.clearLine, with: "\n").split(separator: "\n").map(String.init)
}

@Suite struct ProgressRendererTests {
    @Test(arguments: [4, 10, 20, 30, 40, 60, 80, 120, 300])
    func interactiveLinesNeverExceedTheWidth(width: Int) {
        let names = ["a.bin", String(repeating: "long-name-", count: 20) + ".iso", "日本語のファイル名はとても長いです.zip", "e\u{301}\u{301}.txt"]
        for name in names {
            for total in [Int64(10 << 30), nil] {
                var renderer = ProgressRenderer(mode: .interactive, width: width)
                renderer.serverSpeeds = width % 20 == 0 ? [2_000_000, 150_000, nil] : []
                var text = renderer.start(name: name, totalBytes: total, resumedFrom: 0, at: .zero)
                for step in 1...20 {
                    text += renderer.update(snapshot(Int64(step) * (512 << 20), of: total), at: .seconds(step))
                }
                text += renderer.finish(byteCount: 10 << 30, at: .seconds(21))
                for line in visibleLines(text) {
                    #expect(HumanFormat.displayWidth(line) < width, "\(width) columns: \(line)")
                }
            }
        }
    }

    @Test func interactiveLineShowsNamePercentBarBytesSpeedAndETA() {
        var renderer = ProgressRenderer(mode: .interactive, width: 100)
        _ = renderer.start(name: "ubuntu.iso", totalBytes: 4 << 20, resumedFrom: 0, at: .zero)
        let text = renderer.update(snapshot(1 << 20, of: 4 << 20), at: .seconds(1))
        #expect(text.hasPrefix("\r\u{1B}[2K"))
        #expect(!text.contains("\n"))
        let line = String(text.dropFirst(ProgressRenderer.clearLine.count))
        #expect(line.hasPrefix("ubuntu.iso  25% [==========>"))
        #expect(line.hasSuffix("] 1.0 MiB / 4.0 MiB  1.0 MiB/s  ETA 0:03"))
        #expect(line.count == 99)
    }

    /// While several servers send, each one's speed follows the timing where the line has room
    /// (and on every plain line); a narrow line drops it first.
    @Test func severalServersShowTheirSpeedsWhereThereIsRoom() {
        let speeds: [Double?] = [2_000_000, 150_000, nil]
        let expected = "servers \(HumanFormat.speed(2_000_000)), \(HumanFormat.speed(150_000)), set aside"
        var wide = ProgressRenderer(mode: .interactive, width: 140)
        wide.serverSpeeds = speeds
        _ = wide.start(name: "ubuntu.iso", totalBytes: 4 << 20, resumedFrom: 0, servers: 3, at: .zero)
        #expect(wide.update(snapshot(1 << 20, of: 4 << 20), at: .seconds(1)).hasSuffix("ETA 0:03  " + expected))
        var narrow = ProgressRenderer(mode: .interactive, width: 80)
        narrow.serverSpeeds = speeds
        _ = narrow.start(name: "ubuntu.iso", totalBytes: 4 << 20, resumedFrom: 0, servers: 3, at: .zero)
        #expect(narrow.update(snapshot(1 << 20, of: 4 << 20), at: .seconds(1)).hasSuffix("1.0 MiB/s  ETA 0:03"))
        var plain = ProgressRenderer(mode: .plain, width: 80)
        plain.serverSpeeds = speeds
        _ = plain.start(name: "ubuntu.iso", totalBytes: 4 << 20, resumedFrom: 0, servers: 3, at: .zero)
        #expect(plain.update(snapshot(1 << 20, of: 4 << 20), at: .seconds(10)).hasSuffix("ETA 0:03; " + expected + "\n"))
        plain.serverSpeeds = [2_000_000]
        #expect(!plain.update(snapshot(2 << 20, of: 4 << 20), at: .seconds(20)).contains("servers"), "one server: nothing more")
    }

    @Test func redrawsAreThrottledToTenPerSecond() {
        var renderer = ProgressRenderer(mode: .interactive, width: 80)
        _ = renderer.start(name: "f", totalBytes: 1000, resumedFrom: 0, at: .zero)
        #expect(renderer.update(snapshot(1, of: 1000), at: .milliseconds(50)).isEmpty)
        #expect(!renderer.update(snapshot(2, of: 1000), at: .milliseconds(100)).isEmpty)
        #expect(renderer.update(snapshot(3, of: 1000), at: .milliseconds(150)).isEmpty)
        var draws = 0
        for millis in stride(from: 200, to: 1200, by: 10) {
            if !renderer.update(snapshot(Int64(millis / 2), of: 1000), at: .milliseconds(millis)).isEmpty { draws += 1 }
        }
        #expect(draws == 10)
    }

    @Test func theFinalStateIsAlwaysDrawnThenANewline() {
        var renderer = ProgressRenderer(mode: .interactive, width: 80)
        _ = renderer.start(name: "f.bin", totalBytes: 2 << 20, resumedFrom: 0, at: .zero)
        _ = renderer.update(snapshot(1 << 20, of: 2 << 20), at: .seconds(1))
        #expect(renderer.update(snapshot(2 << 20, of: 2 << 20), at: .milliseconds(1010)).isEmpty)
        let final = renderer.finish(byteCount: 2 << 20, at: .seconds(2))
        #expect(final.hasPrefix(ProgressRenderer.clearLine))
        #expect(final.hasSuffix("\n"))
        #expect(final.contains("100%"))
        #expect(final.contains("2.0 MiB / 2.0 MiB  1.0 MiB/s  in 2.0s"))
        #expect(final.contains("[" + String(repeating: "=", count: 10)))
    }

    @Test func unknownTotalShowsASpinnerAndNoPercentOrETA() {
        var renderer = ProgressRenderer(mode: .interactive, width: 80)
        _ = renderer.start(name: "stream", totalBytes: nil, resumedFrom: 0, at: .zero)
        var spinners: Set<Character> = []
        for step in 1...4 {
            let text = renderer.update(snapshot(Int64(step) << 20, of: nil), at: .seconds(step))
            #expect(text.hasPrefix(ProgressRenderer.clearLine))
            let line = text.dropFirst(ProgressRenderer.clearLine.count)
            #expect(!line.contains("%") && !line.contains("ETA"))
            #expect(line.hasPrefix("stream ["))
            #expect(line.hasSuffix("] \(step).0 MiB  1.0 MiB/s"))
            if let spinner = line.dropFirst("stream [".count).first { spinners.insert(spinner) }
        }
        #expect(spinners == Set(ProgressRenderer.spinner))
    }

    @Test func messagesClearTheLineAndForceARedraw() {
        var renderer = ProgressRenderer(mode: .interactive, width: 80)
        _ = renderer.start(name: "f", totalBytes: 100, resumedFrom: 0, at: .zero)
        #expect(renderer.message("haul: retrying") == ProgressRenderer.clearLine + "haul: retrying\n")
        #expect(!renderer.update(snapshot(5, of: 100), at: .milliseconds(10)).isEmpty)
    }

    @Test func endClosesAnOpenLineOnlyOnce() {
        var renderer = ProgressRenderer(mode: .interactive, width: 80)
        #expect(renderer.end().isEmpty)
        _ = renderer.start(name: "f", totalBytes: 100, resumedFrom: 0, at: .zero)
        _ = renderer.update(snapshot(40, of: 100), at: .seconds(1))
        let ended = renderer.end()
        #expect(ended.hasSuffix("\n") && ended.contains("40%"))
        #expect(renderer.end().isEmpty)
    }

    @Test func plainModePrintsEveryFewSecondsWithoutEscapes() {
        var renderer = ProgressRenderer(mode: .plain, width: 80)
        var text = renderer.start(name: "f.bin", totalBytes: 10 << 20, resumedFrom: 1 << 20, at: .zero)
        #expect(text == "f.bin: started (10.0 MiB, resuming at 1.0 MiB)\n")
        var lines = 0
        for tenth in 1...120 {
            let update = renderer.update(snapshot(Int64(tenth) * (1 << 20) / 10, of: 10 << 20), at: .milliseconds(tenth * 100))
            if !update.isEmpty { lines += 1 }
            text += update
        }
        #expect(lines == 2)  // at 5 s and 10 s
        #expect(text.contains("f.bin: 50% of 10.0 MiB (5.0 MiB), 1.0 MiB/s, ETA 0:05\n"))
        let final = renderer.finish(byteCount: 10 << 20, at: .seconds(9))
        #expect(final == "f.bin: done, 10.0 MiB in 9.0s (1.0 MiB/s)\n")
        text += final + renderer.end()
        #expect(!text.contains("\u{1B}") && !text.contains("\r"))
    }

    @Test func controlCharactersInNamesAreNotSentToTheTerminal() {
        var renderer = ProgressRenderer(mode: .interactive, width: 80)
        let text = renderer.start(name: "evil\u{1B}[31m\u{07}.bin", totalBytes: 10, resumedFrom: 0, at: .zero)
        #expect(text.contains("evil?[31m?.bin"))
        #expect(text.filter { $0 == "\u{1B}" }.count == 1)  // only the clear-line code
    }

    @Test(arguments: [
        (Int64(0), "0 B"), (1023, "1023 B"), (1024, "1.0 KiB"), (1536, "1.5 KiB"), (1_048_575, "1.0 MiB"),
        (5 << 30, "5.0 GiB"), (3 << 40, "3.0 TiB"),
    ])
    func bytesUse1024BasedUnits(count: Int64, text: String) {
        #expect(HumanFormat.bytes(count) == text)
    }

    @Test(arguments: [(Double?.some(3), "0:03"), (62, "1:02"), (3723, "1:02:03"), (0.2, "0:01"), (nil, "--:--"), (.infinity, "--:--")])
    func timesLeftAreClockLike(seconds: Double?, text: String) {
        #expect(HumanFormat.clock(seconds) == text)
    }

    @Test func barFillsWithTheFraction() {
        #expect(ProgressRenderer.bar(0, width: 12) == "[          ]")
        #expect(ProgressRenderer.bar(0.5, width: 12) == "[=====>    ]")
        #expect(ProgressRenderer.bar(1, width: 12) == "[==========]")
    }
}
