import Foundation

/// A task executor with threads of its own, first come, first served: tasks that prefer it
/// (`withTaskExecutorPreference`) run there instead of on the cooperative pool, which other
/// tests may be holding with blocking work.
final class ThreadsExecutor: TaskExecutor, @unchecked Sendable {   // `jobs` is under `condition`
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []

    /// Starts `threads` threads named `name`; they live as long as the process.
    init(threads: Int, name: String) {
        for _ in 0..<max(1, threads) {
            let thread = Thread { [self] in serve() }
            thread.name = name
            thread.start()
        }
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    private func serve() {
        while true {
            condition.lock()
            while jobs.isEmpty { condition.wait() }
            let job = jobs.removeFirst()
            condition.unlock()
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}
