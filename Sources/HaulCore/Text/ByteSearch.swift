import CHaulSys

/// Finding bytes in bytes, as the C library does it (memmem(3)): what a filter over a long list
/// runs once per download.
package enum ByteSearch {
    /// Whether `needle` occurs in `haystack`; an empty needle occurs everywhere.
    package static func contains(_ needle: UnsafeBufferPointer<UInt8>, in haystack: UnsafeBufferPointer<UInt8>) -> Bool {
        guard !needle.isEmpty else { return true }
        guard haystack.count >= needle.count, let base = haystack.baseAddress, let wanted = needle.baseAddress else { return false }
        return haul_bytes_contain(base, haystack.count, wanted, needle.count) != 0
    }
}
