import Foundation

/// What Swift hands to and reads from Imago's C wrappers of the libraries that can run long
/// (Sources/CVideo for FFmpeg, Sources/CRaw for LibRaw).
enum CLibraryCall {
    /// CLOCK_MONOTONIC nanoseconds `duration` from now, the wrappers' deadline; 0 for none.
    static func deadline(after duration: Duration?) -> Int64 {
        guard let duration else { return 0 }
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let (seconds, attoseconds) = duration.components
        return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec) + seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }

    /// The message a wrapper wrote into `buffer`, up to its NUL.
    static func message(_ buffer: [CChar]) -> String {
        String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
