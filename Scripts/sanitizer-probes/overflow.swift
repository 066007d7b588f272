// A planted heap overflow: a write one byte past an allocation. AddressSanitizer must report it
// (Scripts/sanitize.sh probe).
let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: 16)
let index = Int(CommandLine.arguments.count) + 15   // 16: past the end, not known at compile time
buffer[index] = 1
print(buffer[0])
buffer.deallocate()
