import Foundation
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Writes `data` to a file at `path` that must not exist yet (`O_EXCL`), synced to storage when
/// `syncs` is set; on any failure the file is removed. The disk cache and the image library write
/// this way before renaming the file into place.
func writeNewFile(_ data: Data, at path: String, syncs: Bool) throws {
    let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
    guard descriptor >= 0 else { throw POSIXError(errno, "open \(path)") }
    do {
        defer { close(descriptor) }
        try data.withUnsafeBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    throw POSIXError(errno, "write \(path)")
                }
                offset += written
            }
        }
        if syncs, dataSync(descriptor) != 0 { throw POSIXError(errno, "sync \(path)") }
    } catch {
        unlink(path)
        throw error
    }
}

/// Syncs a file's data (and the metadata needed to read it back).
private func dataSync(_ descriptor: Int32) -> Int32 {
    #if os(Linux)
        fdatasync(descriptor)
    #else
        fsync(descriptor)
    #endif
}

extension POSIXError {
    init(_ code: Int32, _ what: String) {
        self.init(POSIXErrorCode(rawValue: code) ?? .EIO, userInfo: [NSLocalizedDescriptionKey: "\(what): \(String(cString: strerror(code)))"])
    }
}
