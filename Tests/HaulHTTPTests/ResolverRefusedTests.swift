import HaulCore
import HaulHTTP
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A name lookup that gets no helper thread or no wake-up descriptor fails with
/// `resourceExhausted` before any lookup runs; so does a connection (the resolver is its first step).
@Suite("Resolving without threads or descriptors")
struct ResolverRefusedTests {
    @Test("no thread for the lookup")
    func noThread() {
        let threads = ThreadPool(starter: { _, _ in EAGAIN })
        var thrown: HTTPClientError?
        do throws(HTTPClientError) {
            _ = try Resolver.resolve(host: "localhost", port: 80, deadline: .now + .seconds(5),
                                     cancellation: CancellationSignal(), threads: threads)
        } catch {
            thrown = error
        }
        #expect(thrown?.kind == .resourceExhausted)
        #expect(thrown?.message.hasPrefix("cannot start a thread: ") == true)
        #expect(threads.threadCount == 0)
    }

    @Test("no wake-up descriptor for the cancellation a connection waits on")
    func noDescriptor() {
        let cancellation = CancellationSignal(wakeup: WakeupDescriptor(open: { _, _ in EMFILE }))
        var thrown: HTTPClientError?
        do throws(HTTPClientError) {
            _ = try TCPSocket.connect(host: "localhost", port: 80, timeout: .seconds(5), cancellation: cancellation,
                                      threads: ThreadPool())
        } catch {
            thrown = error
        }
        #expect(thrown?.kind == .resourceExhausted)
        #expect(thrown?.message.hasPrefix("cannot create a wake-up descriptor: ") == true)
    }
}
