import CHaulSys
import HaulCrypto
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import HaulCore

/// Hashing of files on disk: the finished partial before its rename, and blocks of it on resume.
enum FileHashing {
    /// The read size: large enough that system calls cost nothing next to hashing.
    static let defaultBufferSize = 4 << 20

    /// The digest of the bytes of an open file, read with `pread` (the file offset is untouched).
    ///
    /// - Parameters:
    ///   - descriptor: a file open for reading.
    ///   - algorithm: the hash function.
    ///   - range: the byte offsets to hash; `nil` hashes from 0 to the end of the file.
    ///   - bufferSize: bytes per read.
    /// - Returns: the raw digest.
    /// - Throws: `fileSystem` when a read fails, or when the file ends before `range` does.
    static func hash(descriptor: Int32, algorithm: ChecksumAlgorithm, range: Range<Int64>? = nil,
                     bufferSize: Int = defaultBufferSize) throws(DownloadError) -> [UInt8] {
        let digest = Digest(algorithm)
        try update([digest], descriptor: descriptor, range: range, bufferSize: bufferSize)
        return digest.finalize()
    }

    /// Feeds the bytes of an open file to several digests at once (one read for all of them).
    ///
    /// - Parameters:
    ///   - digests: the computations to continue; each gets every byte of `range`, in order.
    ///   - descriptor: a file open for reading (read with `pread`; the file offset is untouched).
    ///   - range: the byte offsets to hash; `nil` hashes from 0 to the end of the file.
    ///   - bufferSize: bytes per read.
    /// - Throws: `fileSystem` when a read fails, or when the file ends before `range` does.
    static func update(_ digests: [Digest], descriptor: Int32, range: Range<Int64>? = nil,
                       bufferSize: Int = defaultBufferSize) throws(DownloadError) {
        precondition(bufferSize > 0)
        haul_advise_sequential(descriptor)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: bufferSize, alignment: 4096)
        defer { buffer.deallocate() }
        try update(digests, descriptor: descriptor, range: range, buffer: buffer)
    }

    /// Feeds the bytes of an open file to several digests, reading into the caller's `buffer` (a
    /// caller that hashes many ranges keeps one buffer rather than mapping a new one each time,
    /// and gives the kernel its read-ahead advice once).
    ///
    /// - Parameters:
    ///   - digests: the computations to continue; each gets every byte of `range`, in order.
    ///   - descriptor: a file open for reading (read with `pread`; the file offset is untouched).
    ///   - range: the byte offsets to hash; `nil` hashes from 0 to the end of the file.
    ///   - buffer: where the bytes are read to, `buffer.count` at a time (not empty).
    ///   - stop: asked before each read; `true` ends the hashing with `cancelled` (a file of
    ///     gigabytes takes seconds).
    /// - Throws: `fileSystem` when a read fails, or when the file ends before `range` does;
    ///   `cancelled`.
    static func update(_ digests: [Digest], descriptor: Int32, range: Range<Int64>?,
                       buffer: UnsafeMutableRawBufferPointer, stop: () -> Bool = { false }) throws(DownloadError) {
        precondition(!buffer.isEmpty)
        let bufferSize = buffer.count
        var offset = range?.lowerBound ?? 0
        let end = range?.upperBound ?? Int64.max
        while offset < end {
            if stop() { throw DownloadError(.cancelled, "cancelled while verifying the file") }
            let wanted = Int(min(Int64(bufferSize), end - offset))
            let count = pread(descriptor, buffer.baseAddress, wanted, off_t(offset))
            if count < 0 {
                if errno == EINTR { continue }
                throw DownloadError(.fileSystem, "cannot read at offset \(offset) to verify it: \(errnoText())")
            }
            if count == 0 {
                guard range == nil else {
                    throw DownloadError(.fileSystem, "the file ends at \(offset), before \(end)")
                }
                break
            }
            for digest in digests { digest.update(UnsafeRawBufferPointer(rebasing: buffer[..<count])) }
            offset += Int64(count)
        }
    }

    /// The digest of a whole file.
    ///
    /// - Parameters:
    ///   - path: the file (symlinks are followed: callers pass their own files).
    ///   - algorithm: the hash function.
    ///   - bufferSize: bytes per read.
    /// - Returns: the raw digest.
    /// - Throws: `fileSystem` when the file cannot be opened or read.
    static func hash(path: String, algorithm: ChecksumAlgorithm,
                     bufferSize: Int = defaultBufferSize) throws(DownloadError) -> [UInt8] {
        let descriptor = open(path, O_RDONLY | haul_o_cloexec())
        guard descriptor >= 0 else {
            throw DownloadError(.fileSystem, "cannot open '\(path)' to verify it: \(errnoText())")
        }
        defer { close(descriptor) }
        return try hash(descriptor: descriptor, algorithm: algorithm, bufferSize: bufferSize)
    }
}
