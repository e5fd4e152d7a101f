import Foundation

// `imago-bench` runs every benchmark and prints each figure beside its peer's, as a ratio.
// Child modes: `imago-bench serve COUNT SIZE` is the origin process both clients fetch from;
// `imago-bench queued` is the process the queued-handles benchmark measures on its own.
let arguments = Array(CommandLine.arguments.dropFirst())
switch arguments.first {
case "serve":
    try await OriginProcess.serve(count: Int(arguments[1])!, size: Int(arguments[2])!)
case "queued":
    try await QueuedHandlesBenchmark.runChild()
default:
    print("Imago benchmarks — \(Machine.describe()) — \(Date().formatted(.iso8601))")
    print("")
    try await ThroughputBenchmark.run()
    try await CoalescingBenchmark.run()
    try QueuedHandlesBenchmark.run()
}
