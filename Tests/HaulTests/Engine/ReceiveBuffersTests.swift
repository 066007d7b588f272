@testable import Haul
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@Suite("Receive buffers reused")
struct ReceiveBuffersTests {
    @Test("a given-back buffer is handed out again; trim frees the idle ones")
    func buffersAreReused() throws {
        let pool = ReceiveBuffers()
        let one = try pool.take(size: 128 * 1024)
        pool.give(one)
        let again = try pool.take(size: 128 * 1024)
        #expect(again.baseAddress == one.baseAddress)
        let other = try pool.take(size: 256 * 1024)
        #expect(other.count == 256 * 1024)
        #expect(Int(bitPattern: other.baseAddress) % 4096 == 0)
        pool.give(again)
        pool.give(other)
        pool.trim()
        let fresh = try pool.take(size: 64 * 1024)
        #expect(fresh.count == 64 * 1024)
        pool.give(fresh)
    }

    @Test("every buffer given back is kept idle, up to 64, and handed out again")
    func buffersOutAtOnceAreKept() throws {
        let pool = ReceiveBuffers()
        let first = try (0..<16).map { _ in try pool.take(size: 64 * 1024) }
        for buffer in first { pool.give(buffer) }
        #expect(pool.idleCount == 16)
        let second = try (0..<16).map { _ in try pool.take(size: 64 * 1024) }
        #expect(pool.idleCount == 0)
        #expect(Set(second.map(\.baseAddress)) == Set(first.map(\.baseAddress)))
        let more = second + (try (0..<49).map { _ in try pool.take(size: 64 * 1024) })
        for buffer in more { pool.give(buffer) }
        #expect(pool.idleCount == pool.maximumIdle, "65 given back, 64 kept")
        pool.trim()
        #expect(pool.idleCount == 0)
    }

    @Test("a buffer of another size is freed when one of a new size is made")
    func anotherSizeMakesRoom() throws {
        let pool = ReceiveBuffers()
        let small = try (0..<2).map { _ in try pool.take(size: 64 * 1024) }
        for buffer in small { pool.give(buffer) }
        let large = try pool.take(size: 128 * 1024)
        #expect(large.count == 128 * 1024)
        #expect(pool.idleCount == 1, "one idle 64 KiB buffer freed for the 128 KiB one")
        pool.give(large)
        pool.trim()
    }
}
