#if PDF
    import CChildProcess
    import Foundation

    /// A program run to its end as a child process (Sources/CChildProcess): `input` on its
    /// standard input, its standard output read back, killed at the deadline or when it writes
    /// more than allowed, its heap bounded by the kernel, no file it may write, no descriptor but
    /// its pipes, no environment but `LANG=C`. What Imago uses for a library it cannot stop from
    /// inside.
    struct ChildProcess {
        /// The program's absolute path.
        var path: String
        /// Its arguments, after its name.
        var arguments: [String]
        /// Most bytes it may write to its standard output.
        var maxOutput: Int
        /// Most bytes of heap (RLIMIT_DATA) it may take; 0 for no limit.
        var maxHeap: Int
        /// CLOCK_MONOTONIC nanoseconds at which it is killed (``CLibraryCall/deadline(after:)``); 0 for none.
        var deadline: Int64

        /// How a run ended.
        enum Outcome: Equatable {
            /// It exited with `status` (0…255), or was ended by a signal (minus its number), having written `output`.
            case exited(status: Int32, output: Data)
            /// The deadline passed; it was killed.
            case timedOut
            /// It wrote more than ``maxOutput``; it was killed.
            case outputTooLarge
            /// It could not be started (`errno`).
            case notStarted(Int32)
        }

        /// Runs it with `input` and waits for it, or kills it and waits.
        func run(input: Data) -> Outcome {
            let argv: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { $0.withCString { strdup($0) } } + [nil]
            defer { argv.forEach { free($0) } }
            let environment: [UnsafeMutablePointer<CChar>?] = ["LANG=C"].map { $0.withCString { strdup($0) } } + [nil]
            defer { environment.forEach { free($0) } }
            var result = imago_child_result()
            argv.withUnsafeBufferPointer { arguments in
                environment.withUnsafeBufferPointer { environment in
                    input.withUnsafeBytes { bytes in
                        var request = imago_child_request()
                        request.path = UnsafePointer(arguments[0])
                        request.arguments = arguments.baseAddress
                        request.environment = environment.baseAddress
                        request.input = bytes.baseAddress
                        request.input_length = bytes.count
                        request.max_output = maxOutput
                        request.max_data = UInt64(maxHeap)
                        request.deadline_ns = deadline
                        imago_child_run(&request, &result)
                    }
                }
            }
            defer { imago_child_free(&result) }
            switch Int(result.outcome) {
            case Int(IMAGO_CHILD_TIMED_OUT): return .timedOut
            case Int(IMAGO_CHILD_OUTPUT_TOO_LARGE): return .outputTooLarge
            case Int(IMAGO_CHILD_NOT_STARTED): return .notStarted(result.error_number)
            default:
                let output = result.output.map { Data(bytes: $0, count: result.output_length) } ?? Data()
                return .exited(status: result.exit_status, output: output)
            }
        }
    }
#endif
