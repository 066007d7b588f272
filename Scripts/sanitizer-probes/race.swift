// A planted data race: two threads increment one counter without a lock. ThreadSanitizer must
// report it (Scripts/sanitize.sh probe).
import Foundation

final class Counter: @unchecked Sendable {
    var value = 0
}

let counter = Counter()
let done = DispatchSemaphore(value: 0)
for _ in 0..<2 {
    Thread {
        for _ in 0..<10_000 { counter.value += 1 }
        done.signal()
    }.start()
}
done.wait()
done.wait()
print(counter.value)
