import Haul
@testable import HaulCLI
import HaulTestSupport
import Testing

/// `done` of `total` bytes at `speed` bytes/s, with the ETA that speed gives.
private func progress(_ done: Int64, of total: Int64?, speed: Double = 1_048_576) -> DownloadProgress {
    DownloadProgress(completedBytes: done, totalBytes: total, bytesPerSecond: speed,
                     estimatedTimeRemaining: total.map { Double($0 - done) / speed })
}

private let mebibyte: Int64 = 1 << 20

@Suite struct MultiProgressRendererTests {
    /// Three downloads, two running at once, drawn on a screen of `width` columns.
    @Test(arguments: [12, 20, 33, 40, 60, 80, 132])
    func theBlockIsRedrawnInPlaceAndNeverWiderThanTheTerminal(width: Int) {
        var renderer = MultiProgressRenderer(mode: .interactive, width: width, downloadCount: 3)
        var screen = TerminalScreen(width: width)
        let names = ["ubuntu-24.04-desktop-amd64.iso", "日本語のファイル名はとても長いです.zip", "a"]
        screen.apply(renderer.start(id: 0, name: names[0], totalBytes: 100 * mebibyte, resumedFrom: 0, at: .zero))
        screen.apply(renderer.start(id: 1, name: names[1], totalBytes: nil, resumedFrom: 0, at: .milliseconds(10)))
        for step in 1...30 {
            let now = Duration.milliseconds(100 * step)
            screen.apply(renderer.update(id: 0, progress(Int64(step) * mebibyte, of: 100 * mebibyte), at: now))
            screen.apply(renderer.update(id: 1, progress(Int64(step) * 2 * mebibyte, of: nil), at: now + .milliseconds(1)))
            #expect(screen.text.count == 3, "two download lines and the total: \(screen.text)")
            for line in renderer.blockText() {
                #expect(HumanFormat.displayWidth(line) < width, "\(width): \(line)")
            }
        }
        #expect(!screen.overflowed, "only the block was drawn so far")
        screen.apply(renderer.finish(id: 1, name: names[1], byteCount: 60 * mebibyte, at: .seconds(3)))
        screen.apply(renderer.start(id: 2, name: names[2], totalBytes: 10, resumedFrom: 0, at: .seconds(3)))
        screen.apply(renderer.update(id: 2, progress(5, of: 10), at: .milliseconds(3500)))
        #expect(screen.text.count == 4, "the permanent line, two download lines and the total: \(screen.text)")
        for line in screen.text.dropFirst() {
            #expect(HumanFormat.displayWidth(line) < width, "\(width): \(line)")
        }
        screen.apply(renderer.finish(id: 2, name: names[2], byteCount: 10, at: .seconds(4)))
        screen.apply(renderer.finish(id: 0, name: names[0], byteCount: 100 * mebibyte, at: .seconds(5)))
        screen.apply(renderer.end(at: .seconds(5)))

        #expect(screen.unknownEscapes.isEmpty)
        let lines = screen.text
        #expect(lines.count == 4, "\(lines)")
        #expect(lines[0].hasPrefix("日本語") && lines[0].contains(": done, 60.0 MiB in "), "\(lines)")
        #expect(lines[1].hasPrefix("a: done, 10 B in 1.0s"), "\(lines)")
        #expect(lines[2].hasPrefix("ubuntu-24.04-desktop-amd64.iso: done, 100.0 MiB in 5.0s"), "\(lines)")
        #expect(lines[3].hasPrefix("Total: 3/3 done, 160.0 MiB in 5.0s (32.0 MiB/s)"), "\(lines)")
    }

    @Test func blockLinesShowEachDownloadAndTheTotal() {
        var renderer = MultiProgressRenderer(mode: .interactive, width: 120, downloadCount: 4)
        var screen = TerminalScreen(width: 120)
        screen.apply(renderer.start(id: 0, name: "a.bin", totalBytes: 4 * mebibyte, resumedFrom: 0, at: .zero))
        screen.apply(renderer.start(id: 3, name: "longer-name.iso", totalBytes: 8 * mebibyte, resumedFrom: 0, at: .zero))
        screen.apply(renderer.update(id: 0, progress(mebibyte, of: 4 * mebibyte), at: .seconds(1)))
        screen.apply(renderer.update(id: 3, progress(2 * mebibyte, of: 8 * mebibyte), at: .seconds(2)))
        let lines = screen.text
        #expect(lines.count == 3, "\(lines)")
        // Names share one column, so percent and bars line up.
        #expect(lines[0].hasPrefix("a.bin            25% [") && lines[0].hasSuffix("1.0 MiB / 4.0 MiB  1.0 MiB/s  ETA 0:03"), "\(lines)")
        #expect(lines[1].hasPrefix("longer-name.iso  25% [") && lines[1].hasSuffix("2.0 MiB / 8.0 MiB  1.0 MiB/s  ETA 0:06"), "\(lines)")
        // Two of four are queued: no overall length or ETA yet; 3 MiB in 2 s.
        #expect(lines[2] == "Total  0/4 done, 2 queued  3.0 MiB  1.5 MiB/s", "\(lines)")
    }

    @Test(arguments: [60, 80, 100, 200])
    func percentsAndBarsLineUp(width: Int) {
        var renderer = MultiProgressRenderer(mode: .interactive, width: width, downloadCount: 3)
        _ = renderer.start(id: 0, name: "a.bin", totalBytes: 1_000_000, resumedFrom: 0, at: .zero)
        _ = renderer.start(id: 1, name: "a-much-longer-name.tar.gz", totalBytes: 10, resumedFrom: 0, at: .zero)
        _ = renderer.start(id: 2, name: "日本語.zip", totalBytes: 3 * mebibyte, resumedFrom: 0, at: .zero)
        _ = renderer.update(id: 0, progress(219_000, of: 1_000_000, speed: 1_046_323), at: .seconds(1))
        _ = renderer.update(id: 1, progress(5, of: 10, speed: 5), at: .seconds(1))
        _ = renderer.update(id: 2, progress(mebibyte, of: 3 * mebibyte), at: .seconds(1))
        let lines = renderer.blockText().dropLast()
        #expect(lines.count == 3)
        let percentColumns = Set(lines.map { line in
            HumanFormat.displayWidth(String(line[..<(line.firstIndex(of: "%") ?? line.endIndex)]))
        })
        #expect(percentColumns.count == 1, "\(lines)")
        let bars = Set(lines.map { line in
            line.firstIndex(of: "[").map { start in line[start...].prefix { $0 != "]" }.count } ?? 0
        })
        #expect(bars.count == 1, "\(lines)")
        if width >= 80 { #expect(bars.first ?? 0 >= ProgressRenderer.minimumBarWidth - 1, "a bar at 80 columns: \(lines)") }
        for line in lines { #expect(HumanFormat.displayWidth(line) < width) }
    }

    @Test func theTotalKnowsTheLengthAndETAOnceNothingIsQueued() {
        var renderer = MultiProgressRenderer(mode: .interactive, width: 120, downloadCount: 2)
        _ = renderer.start(id: 0, name: "a", totalBytes: 10 * mebibyte, resumedFrom: 0, at: .zero)
        _ = renderer.start(id: 1, name: "b", totalBytes: 30 * mebibyte, resumedFrom: 0, at: .zero)
        for second in 1...4 {
            _ = renderer.update(id: 0, progress(Int64(second) * mebibyte, of: 10 * mebibyte), at: .seconds(second))
            _ = renderer.update(id: 1, progress(Int64(second) * mebibyte, of: 30 * mebibyte), at: .seconds(second))
        }
        // 8 MiB of 40 in 4 s: 2 MiB/s, 32 MiB left, 16 s.
        #expect(renderer.totalLine(separator: "  ") == "Total  0/2 done  8.0 MiB / 40.0 MiB  2.0 MiB/s  ETA 0:16")
        _ = renderer.fail(id: 0, line: "haul: http://h/a: connection reset", at: .seconds(4))
        #expect(renderer.totalLine(separator: "  ") == "Total  0/2 done, 1 failed  8.0 MiB / 34.0 MiB  2.0 MiB/s  ETA 0:13")
    }

    @Test func theOverallSpeedIsAMovingAverageThatFallsDuringAStall() {
        var renderer = MultiProgressRenderer(mode: .interactive, width: 120, downloadCount: 2)
        _ = renderer.start(id: 0, name: "a", totalBytes: nil, resumedFrom: 0, at: .zero)
        for tenth in 1...100 {
            _ = renderer.update(id: 0, progress(Int64(tenth) * mebibyte / 10, of: nil), at: .milliseconds(100 * tenth))
        }
        #expect(renderer.totalLine(separator: "  ").contains("1.0 MiB/s"))
        for tick in 1...12 { _ = renderer.tick(at: .seconds(10) + .milliseconds(500 * tick)) }
        #expect(renderer.totalLine(separator: "  ").hasSuffix("10.0 MiB  0 B/s"), "\(renderer.totalLine(separator: "  "))")
    }

    @Test func redrawsAreThrottledButEventsOfNoteDrawAtOnce() {
        var renderer = MultiProgressRenderer(mode: .interactive, width: 80, downloadCount: 2)
        _ = renderer.start(id: 0, name: "a", totalBytes: 1000, resumedFrom: 0, at: .zero)
        #expect(renderer.update(id: 0, progress(1, of: 1000), at: .milliseconds(50)).isEmpty)
        #expect(!renderer.update(id: 0, progress(2, of: 1000), at: .milliseconds(100)).isEmpty)
        #expect(!renderer.start(id: 1, name: "b", totalBytes: 1000, resumedFrom: 0, at: .milliseconds(120)).isEmpty)
        var draws = 0
        for millis in stride(from: 130, to: 1130, by: 5) {
            let id = millis % 2
            if !renderer.update(id: id, progress(Int64(millis / 2), of: 1000), at: .milliseconds(millis)).isEmpty { draws += 1 }
        }
        #expect(draws == 10)
        #expect(!renderer.message("haul: http://h/b: reset; retrying in 1.0s (attempt 1)", at: .milliseconds(1131)).isEmpty)
        #expect(!renderer.finish(id: 0, name: "a", byteCount: 1000, at: .milliseconds(1132)).isEmpty)
    }

    @Test func theFinalStateIsDrawnEvenRightAfterAThrottledUpdate() {
        var renderer = MultiProgressRenderer(mode: .interactive, width: 80, downloadCount: 2)
        var screen = TerminalScreen(width: 80)
        screen.apply(renderer.start(id: 0, name: "a", totalBytes: 2 * mebibyte, resumedFrom: 0, at: .zero))
        screen.apply(renderer.start(id: 1, name: "b", totalBytes: 2 * mebibyte, resumedFrom: 0, at: .zero))
        screen.apply(renderer.update(id: 0, progress(mebibyte, of: 2 * mebibyte), at: .seconds(1)))
        #expect(renderer.update(id: 1, progress(2 * mebibyte, of: 2 * mebibyte), at: .milliseconds(1010)).isEmpty)
        screen.apply(renderer.fail(id: 0, line: "haul: http://h/a: interrupted; the partial file is kept", at: .milliseconds(1020)))
        #expect(screen.text.last?.contains("3.0 MiB / 3.0 MiB") == true, "the held update shows with the next draw: \(screen.text)")
        screen.apply(renderer.fail(id: 1, line: "haul: http://h/b: interrupted; the partial file is kept", at: .milliseconds(1030)))
        let final = renderer.end(at: .seconds(2))
        #expect(final.hasSuffix("\n"))
        screen.apply(final)
        #expect(screen.text == [
            "haul: http://h/a: interrupted; the partial file is kept",
            "haul: http://h/b: interrupted; the partial file is kept",
            "Total: 0/2 done, 2 failed, 3.0 MiB in 2.0s (1.5 MiB/s)",
        ])
    }

    @Test func permanentLinesAreNotCutToTheWidth() {
        var renderer = MultiProgressRenderer(mode: .interactive, width: 30, downloadCount: 2)
        var screen = TerminalScreen(width: 200)
        screen.apply(renderer.start(id: 0, name: "a", totalBytes: 10, resumedFrom: 0, at: .zero))
        let error = "haul: http://example.test/a/long/path: the server answered 404 Not Found"
        screen.apply(renderer.fail(id: 0, line: error, at: .seconds(1)))
        #expect(screen.text.first == error)
        #expect(screen.text.dropFirst().allSatisfy { $0.count < 30 })
    }

    @Test func manyRunningDownloadsAreFoldedIntoOneLine() {
        var renderer = MultiProgressRenderer(mode: .interactive, width: 80, downloadCount: 16, maximumLines: 3)
        var screen = TerminalScreen(width: 80)
        for id in 0..<5 {
            screen.apply(renderer.start(id: id, name: "f\(id)", totalBytes: 100, resumedFrom: 0, at: .milliseconds(id)))
        }
        let lines = screen.text
        #expect(lines.count == 5, "\(lines)")
        #expect(lines[0].hasPrefix("f0 ") && lines[2].hasPrefix("f2 "))
        #expect(lines[3] == "… and 2 more running")
        #expect(lines[4].hasPrefix("Total  0/16 done, 11 queued"))
    }

    @Test func skippedDownloadsSaySo() {
        var renderer = MultiProgressRenderer(mode: .plain, width: 80, downloadCount: 2)
        #expect(renderer.finish(id: 1, name: "x.bin", byteCount: 5, note: "exists, skipped", at: .zero) == "x.bin: exists, skipped\n")
    }

    @Test func plainModePrintsEventsOfNoteAndATotalEveryFewSeconds() {
        var renderer = MultiProgressRenderer(mode: .plain, width: 80, downloadCount: 3)
        var text = renderer.start(id: 0, name: "a.bin", totalBytes: 10 * mebibyte, resumedFrom: 0, at: .zero)
        text += renderer.start(id: 1, name: "b\u{1B}.bin", totalBytes: nil, resumedFrom: 0, at: .zero)
        var totals = 0
        for tenth in 1...120 {
            let now = Duration.milliseconds(100 * tenth)
            let update = renderer.update(id: 0, progress(min(10 * mebibyte, Int64(tenth) * mebibyte / 10), of: 10 * mebibyte), at: now)
                + renderer.tick(at: now)
            if !update.isEmpty { totals += 1 }
            text += update
        }
        #expect(totals == 2)  // at 5 s and 10 s
        text += renderer.finish(id: 0, name: "a.bin", byteCount: 10 * mebibyte, at: .seconds(12))
        text += renderer.message("haul: http://h/c: the server answered 404 Not Found", at: .seconds(12))
        text += renderer.end(at: .seconds(12))
        #expect(!text.contains("\u{1B}") && !text.contains("\r"))
        let lines = text.split(separator: "\n").map(String.init)
        #expect(lines == [
            "a.bin: started (10.0 MiB)",
            "b?.bin: started (size unknown)",
            "Total: 0/3 done, 1 queued, 5.0 MiB, 1.0 MiB/s",
            "Total: 0/3 done, 1 queued, 10.0 MiB, 1.0 MiB/s",
            "a.bin: done, 10.0 MiB in 12.0s (853.3 KiB/s)",
            "haul: http://h/c: the server answered 404 Not Found",
            "Total: 1/3 done, 1 not started, 10.0 MiB in 12.0s (853.3 KiB/s)",
        ])
    }
}

@Suite struct SpeedMeterTests {
    @Test func averagesOverTheWindowOnly() {
        var meter = SpeedMeter(window: .seconds(5))
        #expect(meter.bytesPerSecond == 0)
        // 10 s at 1 MiB/s, then 5 s at 3 MiB/s: the window sees only the last 5 s.
        var bytes: Int64 = 0
        for tenth in 1...150 {
            bytes += tenth <= 100 ? mebibyte / 10 : 3 * mebibyte / 10
            meter.record(bytes, at: .milliseconds(100 * tenth))
        }
        #expect(abs(meter.bytesPerSecond - 3 * 1_048_576) < 0.05 * 3 * 1_048_576, "\(meter.bytesPerSecond)")
    }

    @Test func closeSamplesAreMerged() {
        var meter = SpeedMeter(window: .seconds(1), resolution: .milliseconds(100))
        for millis in 0...999 { meter.record(Int64(millis) * 1000, at: .milliseconds(millis)) }
        // 1000 bytes per millisecond whatever the merging.
        #expect(abs(meter.bytesPerSecond - 1_000_000) < 1)
    }
}
