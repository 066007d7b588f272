import Synchronization
import HaulCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Receive buffers reused from one transfer to the next: a 1 MiB buffer allocated and freed per
/// download is an `mmap`, page faults and a `munmap` each, which shows with many small files.
/// Every buffer given back is kept idle, up to ``maximumIdle``: a buffer is only made when none of
/// its size is idle, and then an idle buffer of another size is freed, so the idle ones are never
/// more than were out at once and keeping them never raises the peak memory. Idle buffers are
/// freed when a thread of the downloader's ``ThreadPool`` retires after its idle time, so an idle
/// downloader holds none for long. Memory the system refuses is an error of the transfer that
/// asked (``take(size:)`` throws), never a trap.
final class ReceiveBuffers: Sendable {
    /// The most idle buffers kept (one per transfer of `-j 64`).
    let maximumIdle = 64
    private let idle = SharedStateLock<[Buffer]>([])

    /// An address that may cross threads: each buffer is used by one transfer at a time.
    private struct Buffer: @unchecked Sendable {
        let memory: UnsafeMutableRawBufferPointer
    }

    /// A buffer of `size` bytes (page aligned), reused when one is idle.
    ///
    /// - Throws: `resourceExhausted` when the memory could not be allocated.
    func take(size: Int) throws(DownloadError) -> UnsafeMutableRawBufferPointer {
        let (reused, unused) = idle.withLock { idle -> (Buffer?, Buffer?) in
            if let index = idle.lastIndex(where: { $0.memory.count == size }) { return (idle.remove(at: index), nil) }
            return (nil, idle.popLast())   // of another size: a new buffer takes its place
        }
        if let unused { Self.free(unused.memory) }
        if let reused { return reused.memory }
        var memory: UnsafeMutableRawPointer?
        guard posix_memalign(&memory, 4096, size) == 0, let memory else {
            throw DownloadError(.memory(byteCount: size))
        }
        return UnsafeMutableRawBufferPointer(start: memory, count: size)
    }

    /// Frees a buffer ``take(size:)`` allocated (with `posix_memalign`, so with `free`).
    private static func free(_ buffer: UnsafeMutableRawBufferPointer) {
        #if canImport(Glibc)
        Glibc.free(buffer.baseAddress)
        #else
        Darwin.free(buffer.baseAddress)
        #endif
    }

    /// Gives back a buffer from ``take(size:)``; the caller must not use it afterwards.
    func give(_ buffer: UnsafeMutableRawBufferPointer) {
        let kept = idle.withLock { idle -> Bool in
            guard idle.count < maximumIdle else { return false }
            idle.append(Buffer(memory: buffer))
            return true
        }
        if !kept { Self.free(buffer) }
    }

    /// How many buffers are idle now.
    var idleCount: Int { idle.withLock(\.count) }

    /// Frees every idle buffer.
    func trim() {
        let freed = idle.withLock { idle -> [Buffer] in
            defer { idle = [] }
            return idle
        }
        for buffer in freed { Self.free(buffer.memory) }
    }
}
