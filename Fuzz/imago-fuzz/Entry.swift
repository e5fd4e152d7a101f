// libFuzzer harnesses for Imago's own Swift API, one binary: IMAGO_FUZZ_TARGET names the harness
// (see Harness.all). `make fuzz` builds it with -sanitize=fuzzer,address and -DIMAGO_FUZZ; an
// ordinary build makes a binary that says so.
import Foundation
import Imago

#if IMAGO_FUZZ
    @_cdecl("LLVMFuzzerTestOneInput")
    public func fuzzOneInput(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
        let data = start.map { Data(bytes: $0, count: count) } ?? Data()
        Harness.selected.run(data)
        // What a global cache holds at exit reads as leaked (see ColorCaches): start each input afresh.
        ColorCaches.removeAll()
        return 0
    }

    @_silgen_name("LLVMFuzzerRunDriver")
    func runFuzzerDriver(
        _ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
        _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
    ) -> CInt

    /// SwiftPM links an executable's entry point under this name and points `main` at it: hand the
    /// process to libFuzzer's driver.
    @_cdecl("imago_fuzz_main")
    public func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
        var argc = argc
        var argv = argv
        return runFuzzerDriver(&argc, &argv) { start, count in fuzzOneInput(start, count) }
    }
#else
    @main
    enum NotAFuzzBuild {
        static func main() {
            FileHandle.standardError.write(Data("imago-fuzz is a libFuzzer harness: build and run it with `make fuzz`.\n".utf8))
            exit(64)
        }
    }
#endif
