@testable import Haul
import HaulCore
import HaulHTTP
import Synchronization
import HaulTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Counts the syncs; descriptor 99 fails with EIO.
private final class CountedSync: Sendable {
    let count = Atomic(0)
    func sync(_ fd: Int32) -> Int32 {
        count.add(1, ordering: .relaxed)
        return fd == 99 ? EIO : 0
    }
}

/// The results the callers got.
private final class Results: Sendable {
    let values = SharedStateLock<[Int32]>([])
    func add(_ value: Int32) { values.withLock { $0.append(value) } }
}

@Suite("Folder syncs: one fsync for every rename made before it started")
struct FolderSyncTests {

    @Test("eight callers waiting on a slow sync share two syncs", .timeLimit(.minutes(1)))
    func groupCommit() async {
        let slow = CountedSync()
        let made = SharedStateLock<FolderSync?>(nil)
        // The first sync lasts until all eight callers have asked for one (the count the sync
        // state keeps), so on a loaded machine too the seven others ask while it runs.
        let folder = FolderSync(sync: { fd in
            if slow.count.load(ordering: .relaxed) == 0 {
                while (made.withLock { $0 }?.requestsSoFar ?? 0) < 8 { usleep(1_000) }
            }
            return slow.sync(fd)
        })
        made.withLock { $0 = folder }
        let results = Results()
        let threads = ThreadPool()   // real threads: the cooperative pool has one per core
        func call() async {
            await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                threads.runInTest {
                    results.add(folder.sync(descriptor: 3))
                    done.resume()
                }
            }
        }
        // The first call starts a sync; the seven that arrive while it runs need one more, shared.
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<8 { group.addTask { await call() } }
        }
        #expect(results.values.withLock { $0 } == Array(repeating: 0, count: 8))
        #expect(slow.count.load(ordering: .relaxed) == 2)
    }

    @Test("a sync that starts after a call returned is a new one (nothing is skipped)")
    func sequentialCallsEachSync() {
        let slow = CountedSync()
        let folder = FolderSync(sync: { slow.sync($0) })
        for _ in 0..<3 { #expect(folder.sync(descriptor: 3) == 0) }
        #expect(slow.count.load(ordering: .relaxed) == 3)
    }

    @Test("the error of the sync that covered a call is that call's result")
    func errorsReachTheCaller() {
        let folder = FolderSync(sync: { CountedSync().sync($0) })
        #expect(folder.sync(descriptor: 99) == EIO)
        #expect(folder.sync(descriptor: 3) == 0)
    }

    @Test("the real sync of a folder succeeds; one instance per folder identity")
    func realFolder() throws {
        let fd = open("/tmp", O_RDONLY)
        defer { close(fd) }
        #expect(FolderSync(sync: { fsync($0) == 0 ? 0 : errno }).sync(descriptor: fd) == 0)
        let one = FolderIdentity(device: 1, inode: 1), other = FolderIdentity(device: 1, inode: 2)
        let folders = FolderRegistry()
        #expect(folders.sync(for: one) === folders.sync(for: one))
        #expect(folders.sync(for: one) !== folders.sync(for: other))
    }
}
