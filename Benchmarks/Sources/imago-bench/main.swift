import Foundation

// `imago-bench` runs every benchmark and prints each figure beside its peer's, as a ratio.
// Child modes: `imago-bench serve COUNT SIZE` is the origin process both clients fetch from;
// `imago-bench queued`, `imago-bench decode-rss FILE` and `imago-bench hostile convert|fetch FILE`
// are the processes the memory benchmarks measure on their own.
let arguments = Array(CommandLine.arguments.dropFirst())
switch arguments.first {
case "serve":
    try await OriginProcess.serve(count: Int(arguments[1])!, size: Int(arguments[2])!)
case "queued":
    try await QueuedHandlesBenchmark.runChild()
case "decode-rss":
    try CodecBenchmark.decodeForMemory(arguments[1])
case "hostile" where arguments.count == 3:
    await HostileBenchmark.runChild(mode: arguments[1], file: arguments[2])
default:
    // `imago-bench [network] [codecs] [formats] [cache] [processing] [batch] [color] [autoquality] [hostile] [server] [startup] [jpeg] [encoders] [hdr] [faces] [video] [raw] [pdf]` runs those groups
    // (`memory-cache` or `disk-cache` runs half of `cache`, `faces-detection` the first half of `faces`, `throughput` and `http2` the first two of
    // `network`, `png-encode` the first of `formats`); no
    // argument runs all.
    let groups =
        arguments.isEmpty
        ? [
            "network", "codecs", "formats", "cache", "processing", "batch", "color", "autoquality", "hostile", "server", "startup", "jpeg", "encoders", "hdr",
            "faces", "video", "raw", "pdf",
        ]
        : arguments
    print("Imago benchmarks — \(Machine.describe()) — \(Date().formatted(.iso8601))")
    print("")
    if groups.contains("network") || groups.contains("throughput") {
        try await ThroughputBenchmark.run()
    }
    if groups.contains("network") || groups.contains("http2") {
        try await HTTP2Benchmark.run()
    }
    if groups.contains("network") {
        try await CoalescingBenchmark.run()
        try QueuedHandlesBenchmark.run()
    }
    if groups.contains("codecs") { try CodecBenchmark.run() }
    if groups.contains("formats") {
        try FormatBenchmark.run()
    } else if groups.contains("png-encode") {
        try FormatBenchmark.pngEncode(FormatBenchmark.photos())
    }
    if groups.contains("cache") || groups.contains("memory-cache") { await MemoryCacheBenchmark.run() }
    if groups.contains("cache") || groups.contains("disk-cache") { try DiskCacheBenchmark.run() }
    if groups.contains("processing") { try await ThumbnailBenchmark.run() }
    if groups.contains("batch") { try BatchThumbnailBenchmark.run() }
    if groups.contains("startup") { try StartupBenchmark.run() }
    if groups.contains("video") { try VideoBenchmark.run() }
    if groups.contains("raw") { try RAWBenchmark.run() }
    if groups.contains("pdf") { try PDFBenchmark.run() }
    if groups.contains("jpeg") { try JPEGBytesBenchmark.run() }
    if groups.contains("encoders") { try EncoderBenchmark.run() }
    if groups.contains("hdr") { try HDRBenchmark.run() }
    if groups.contains("color") { try await ColorBenchmark.run() }
    if groups.contains("autoquality") { try AutoQualityBenchmark.run() }
    if groups.contains("hostile") { try HostileBenchmark.run() }
    if groups.contains("server") { try ServerBenchmark.run() }
    if groups.contains("faces") || groups.contains("faces-detection") { try FacesBenchmark.run(server: groups.contains("faces")) }
}
