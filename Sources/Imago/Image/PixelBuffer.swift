#if canImport(Glibc)
    import Glibc
#endif

/// Makes the byte array a decoder writes pixels into, without zero-filling it first (the decoder
/// writes every byte, or fails and the array is dropped). Large buffers are advised to the kernel
/// as huge-page candidates: first-touch page faults on a fresh 36 MB buffer cost ~20 ms on the
/// project's machine, ~5 ms with huge pages.
func makePixelBuffer(count: Int, _ fill: (UnsafeMutableBufferPointer<UInt8>) -> Result<Void, ImagoError>) throws(ImagoError) -> [UInt8] {
    var outcome: Result<Void, ImagoError> = .success(())
    let pixels = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
        adviseHugePages(buffer)
        outcome = fill(buffer)
        initialized = count
    }
    try outcome.get()
    return pixels
}

private func adviseHugePages(_ buffer: UnsafeMutableBufferPointer<UInt8>) {
    #if os(Linux)
        let hugePage = 2 << 20
        guard buffer.count >= 2 * hugePage, let base = buffer.baseAddress else { return }
        let pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))
        let start = (Int(bitPattern: base) + pageSize - 1) / pageSize * pageSize
        let end = (Int(bitPattern: base) + buffer.count) / pageSize * pageSize
        guard end > start, let aligned = UnsafeMutableRawPointer(bitPattern: start) else { return }
        _ = madvise(aligned, end - start, MADV_HUGEPAGE)
    #endif
}

extension [UInt8] {
    /// Whether `other` is this very buffer (one storage, not equal bytes): a variant that is its
    /// decode's own pixels.
    func sharesStorage(with other: [UInt8]?) -> Bool {
        guard let other, !isEmpty, count == other.count else { return false }
        return withUnsafeBufferPointer { mine in other.withUnsafeBufferPointer { $0.baseAddress == mine.baseAddress } }
    }
}

/// Draws `pixels` (RGBA, `width`×`height`) into `canvas` (RGBA, `canvasWidth` wide) with its
/// top-left corner at `origin`, clipped to the canvas: a video sprite's frames, a document's pages.
func copyRGBA(_ pixels: [UInt8], width: Int, height: Int, into canvas: inout [UInt8], canvasWidth: Int, at origin: (x: Int, y: Int)) {
    let canvasHeight = canvas.count / max(1, canvasWidth * 4)
    let left = max(0, origin.x), right = min(canvasWidth, origin.x + width)
    guard left < right, pixels.count >= width * height * 4 else { return }
    canvas.withUnsafeMutableBytes { target in
        pixels.withUnsafeBytes { source in
            for row in 0..<height {
                let y = origin.y + row
                guard y >= 0, y < canvasHeight else { continue }
                let from = (row * width + (left - origin.x)) * 4, to = (y * canvasWidth + left) * 4
                (target.baseAddress! + to).copyMemory(from: source.baseAddress! + from, byteCount: (right - left) * 4)
            }
        }
    }
}
