import Foundation
import Imago

extension ServerSettings {
    /// What the service keeps: in memory and on disk.
    static let memory: [ServerSetting] = [
        .integer(
            "--memory-bytes", "IMAGO_MEMORY_BYTES", (1 << 20)...(1 << 40),
            "bytes kept in memory between requests: encoded variants and their paths", \.memoryBytes),
        .text("--cache-dir", "IMAGO_CACHE_DIR", "disk cache of sources and variants; default none") { $0.cacheDirectory = URL(fileURLWithPath: $1) },
    ]
}
