import HaulFuzzTargets
#if canImport(Glibc)
import Glibc
#endif

/// libFuzzer's driver, from the fuzzer runtime `-sanitize=fuzzer` links in.
@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(_ argc: UnsafeMutablePointer<CInt>,
                         _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
                         _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt) -> CInt

/// The program's entry: SwiftPM links an executable's `main` to `<module>_main`, so this starts
/// libFuzzer's driver itself, with the target named by `HAUL_FUZZ_TARGET`.
@_cdecl("HaulFuzz_main")
public func haulFuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    var count = argc
    var arguments = argv
    _ = selectedTarget
    return LLVMFuzzerRunDriver(&count, &arguments) { data, size in
        selectedTarget.run(UnsafeRawBufferPointer(start: data, count: size))
        return 0
    }
}

/// The target this process fuzzes (a process fuzzes one).
let selectedTarget: FuzzTargets.Target = {
    let name = getenv("HAUL_FUZZ_TARGET").map { String(cString: $0) } ?? ""
    guard let target = FuzzTargets.named(name) else {
        fatalError("HAUL_FUZZ_TARGET must be one of: \(FuzzTargets.all.map(\.name).joined(separator: ", "))")
    }
    return target
}()
