#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// Open descriptors and resident memory of this process, to catch leaks across a soak.
struct ProcessStats: CustomStringConvertible {
    /// Open file descriptors (`/proc/self/fd`; `-1` when unknown).
    var descriptors: Int
    /// Resident set size in KiB (`VmRSS` of `/proc/self/status`; `-1` when unknown).
    var residentKiB: Int
    /// Threads of the process (`Threads` of `/proc/self/status`; `-1` when unknown).
    var threads: Int

    /// Measures now.
    static func current() -> ProcessStats {
        let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count).map { $0 - 1 } ?? -1
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        func field(_ name: String) -> Int {
            for line in status.split(separator: "\n") where line.hasPrefix(name + ":") {
                let digits = line.dropFirst(name.count + 1).filter(\.isNumber)
                return Int(digits) ?? -1
            }
            return -1
        }
        return ProcessStats(descriptors: descriptors, residentKiB: field("VmRSS"), threads: field("Threads"))
    }

    /// What each open descriptor refers to (`/proc/self/fd/N` link targets), by number.
    static func descriptorTargets() -> [Int: String] {
        let numbers = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        var targets: [Int: String] = [:]
        for number in numbers.compactMap({ Int($0) }) {
            targets[number] = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(number)")) ?? "?"
        }
        return targets
    }

    var description: String {
        let mebibytes = residentKiB < 0 ? "?" : String(format: "%.1f MiB", Double(residentKiB) / 1024)
        return "open fds \(descriptors), RSS \(mebibytes), threads \(threads)"
    }
}
