import Synchronization
import HaulCore

/// Receive buffers reused from one transfer to the next: a 1 MiB buffer allocated and freed per
/// download is an `mmap`, page faults and a `munmap` each, which shows with many small files.
/// Every buffer given back is kept idle, up to ``maximumIdle``: a buffer is only made when none of
/// its size is idle, and then an idle buffer of another size is freed, so the idle ones are never
/// more than were out at once and keeping them never raises the peak memory. Idle buffers are
/// freed when a thread of the downloader's ``ThreadPool`` retires after its idle time, so an idle
/// downloader holds none for long.
final class ReceiveBuffers: Sendable {
    /// The most idle buffers kept (one per transfer of `-j 64`).
    let maximumIdle = 64
    private let idle = SharedStateLock<[Buffer]>([])

    /// An address that may cross threads: each buffer is used by one transfer at a time.
    private struct Buffer: @unchecked Sendable {
        let memory: UnsafeMutableRawBufferPointer
    }

    /// A buffer of `size` bytes (page aligned), reused when one is idle.
    func take(size: Int) -> UnsafeMutableRawBufferPointer {
        let (reused, unused) = idle.withLock { idle -> (Buffer?, Buffer?) in
            if let index = idle.lastIndex(where: { $0.memory.count == size }) { return (idle.remove(at: index), nil) }
            return (nil, idle.popLast())   // of another size: a new buffer takes its place
        }
        unused?.memory.deallocate()
        return reused?.memory ?? UnsafeMutableRawBufferPointer.allocate(byteCount: size, alignment: 4096)
    }

    /// Gives back a buffer from ``take(size:)``; the caller must not use it afterwards.
    func give(_ buffer: UnsafeMutableRawBufferPointer) {
        let kept = idle.withLock { idle -> Bool in
            guard idle.count < maximumIdle else { return false }
            idle.append(Buffer(memory: buffer))
            return true
        }
        if !kept { buffer.deallocate() }
    }

    /// How many buffers are idle now.
    var idleCount: Int { idle.withLock(\.count) }

    /// Frees every idle buffer.
    func trim() {
        let freed = idle.withLock { idle -> [Buffer] in
            defer { idle = [] }
            return idle
        }
        for buffer in freed { buffer.memory.deallocate() }
    }
}
