import Foundation

/// `imago serve` against thumbor 7.8 and nginx (cold and hot, peak RSS): the servers, the origin,
/// wrk and the clients are processes, so the work is in Benchmarks/serve_bench.py, run by the
/// bench venv's python (which has thumbor and Pillow); its lines are printed as they come.
enum ServerBenchmark {
    static func run() throws {
        guard let cli = ProcessInfo.processInfo.environment["IMAGO_CLI"], FileManager.default.isExecutableFile(atPath: cli) else {
            throw BenchmarkError("the server group needs IMAGO_CLI, the release imago binary (make bench sets it)")
        }
        let python = ProcessInfo.processInfo.environment["IMAGO_BENCH_PYTHON"] ?? "/usr/bin/python3"
        let script = URL(fileURLWithPath: #filePath).appendingPathComponent("../../../serve_bench.py").standardizedFileURL.path
        fflush(nil)  // every stream: `stdout` itself is shared mutable state to Swift 6
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = [script, cli]
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw BenchmarkError("serve_bench.py exited with \(process.terminationStatus)") }
    }
}
