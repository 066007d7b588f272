import HaulTestSupport
import Testing
@testable import HaulHTTP
import HaulCore

/// ``ContentRange/parse(_:)``.
@Suite struct ContentRangeTests {
    @Test(arguments: [
        ("bytes 0-499/1234", ContentRange.satisfied(first: 0, last: 499, complete: 1234)),
        ("bytes 0-0/1", .satisfied(first: 0, last: 0, complete: 1)),
        ("bytes 500-999/*", .satisfied(first: 500, last: 999, complete: nil)),
        ("Bytes 1-2/3", .satisfied(first: 1, last: 2, complete: 3)),
        (" bytes 1-2/3\t", .satisfied(first: 1, last: 2, complete: 3)),
        ("bytes 007-008/010", .satisfied(first: 7, last: 8, complete: 10)),
        ("bytes 9223372036854775806-9223372036854775806/9223372036854775807",
         .satisfied(first: 9_223_372_036_854_775_806, last: 9_223_372_036_854_775_806, complete: Int64.max)),
        ("bytes */1234", .unsatisfied(complete: 1234)),
        ("bytes */0", .unsatisfied(complete: 0)),
    ])
    func parsesValidValues(_ value: String, expected: ContentRange) {
        #expect(ContentRange.parse(value) == expected)
    }

    @Test(arguments: [
        "", "bytes", "bytes ", "bytes 0-499", "bytes=0-499/1234", "items 0-1/2", "bytes 5-4/10", "bytes 0-10/10",
        "bytes -1-5/10", "bytes 0--5/10", "bytes +0-5/10", "bytes 0-5/-10", "bytes 0-99999999999999999999/*",
        "bytes 0-5/99999999999999999999", "bytes */*", "bytes 0-5/10x", "bytes  0-5/10", "bytes 0 -5/10",
        "bytes a-b/c", "bytes */", "bytes 0-/10", "bytes -5/10", "bytes 0-5/", "bytes 0-5", "bytes 1-2/3/4", "bytesx 1-2/3",
        "bytes 0x1-2/3",
    ])
    func rejectsInvalidValues(_ value: String) {
        #expect(ContentRange.parse(value) == nil)
    }
}
