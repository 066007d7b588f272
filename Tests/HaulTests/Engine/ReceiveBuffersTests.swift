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
    func buffersAreReused() {
        let pool = ReceiveBuffers()
        let one = pool.take(size: 128 * 1024)
        pool.give(one)
        let again = pool.take(size: 128 * 1024)
        #expect(again.baseAddress == one.baseAddress)
        let other = pool.take(size: 256 * 1024)
        #expect(other.count == 256 * 1024)
        #expect(Int(bitPattern: other.baseAddress) % 4096 == 0)
        pool.give(again)
        pool.give(other)
        pool.trim()
        let fresh = pool.take(size: 64 * 1024)
        #expect(fresh.count == 64 * 1024)
        fresh.deallocate()
    }

    @Test("every buffer given back is kept idle, up to 64, and handed out again")
    func buffersOutAtOnceAreKept() {
        let pool = ReceiveBuffers()
        let first = (0..<16).map { _ in pool.take(size: 64 * 1024) }
        for buffer in first { pool.give(buffer) }
        #expect(pool.idleCount == 16)
        let second = (0..<16).map { _ in pool.take(size: 64 * 1024) }
        #expect(pool.idleCount == 0)
        #expect(Set(second.map(\.baseAddress)) == Set(first.map(\.baseAddress)))
        let more = second + (0..<49).map { _ in pool.take(size: 64 * 1024) }
        for buffer in more { pool.give(buffer) }
        #expect(pool.idleCount == pool.maximumIdle, "65 given back, 64 kept")
        pool.trim()
        #expect(pool.idleCount == 0)
    }

    @Test("a buffer of another size is freed when one of a new size is made")
    func anotherSizeMakesRoom() {
        let pool = ReceiveBuffers()
        let small = (0..<2).map { _ in pool.take(size: 64 * 1024) }
        for buffer in small { pool.give(buffer) }
        let large = pool.take(size: 128 * 1024)
        #expect(large.count == 128 * 1024)
        #expect(pool.idleCount == 1, "one idle 64 KiB buffer freed for the 128 KiB one")
        pool.give(large)
        pool.trim()
    }
}
