// Writes StressPayload entries into a disk cache without end, for the crash test: the test kills
// this process with SIGKILL at an arbitrary moment and then checks every entry it finds.
// Usage: imago-cache-writer DIR [KEYS]. Prints "flushed N" after each batch reaches the disk.
import Foundation
import Imago
import ImagoTestSupport

let arguments = CommandLine.arguments
guard arguments.count >= 2 else {
    FileHandle.standardError.write(Data("usage: imago-cache-writer DIR [KEYS]\n".utf8))
    exit(2)
}
let keys = arguments.count > 2 ? Int(arguments[2]) ?? 64 : 64
let cache = try DiskCache(configuration: .init(directory: URL(fileURLWithPath: arguments[1]), sizeLimit: 8 << 20))
let metadata = CacheMetadata(
    contentType: "application/octet-stream", receivedAt: Date(),
    freshness: HTTPFreshness(headers: [:], receivedAt: Date())
)
var version = Int(getpid()) * 1_000_000
var batches = 0
while true {
    for _ in 0..<8 {
        version += 1
        let key = "k\(version % keys)"
        cache.store(StressPayload.make(key: key, version: version), for: key, metadata: metadata)
    }
    cache.flush()
    batches += 1
    FileHandle.standardOutput.write(Data("flushed \(batches)\n".utf8))
}
