extension [UInt8] {
    /// `withUnsafeBytes` for a body that throws only `DownloadError`.
    func withBytes<Result>(_ body: (UnsafeRawBufferPointer) throws(DownloadError) -> Result) throws(DownloadError) -> Result {
        var outcome: Swift.Result<Result, DownloadError>?
        withUnsafeBytes { bytes in outcome = Swift.Result { () throws(DownloadError) in try body(bytes) } }
        return try outcome!.get()
    }
}
