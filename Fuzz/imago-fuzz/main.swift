// libFuzzer harnesses for Imago's own Swift API, one binary: IMAGO_FUZZ_TARGET names the harness
// (see Harness.all). `make fuzz` builds it with -sanitize=fuzzer,address and -DIMAGO_FUZZ, which
// makes LLVMFuzzerTestOneInput the entry point; an ordinary build makes a binary that says so.
import Foundation

#if IMAGO_FUZZ
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let data = start.map { Data(bytes: $0, count: count) } ?? Data()
    Harness.selected.run(data)
    return 0
}
#else
FileHandle.standardError.write(Data("imago-fuzz is a libFuzzer harness: build and run it with `make fuzz`.\n".utf8))
exit(64)
#endif
