import CProcessMemory
import Foundation

/// How `imago serve` keeps the memory a busy moment freed from staying with the process, without
/// paying for it on every request. Blocks up to ``mmapThreshold`` come from glibc's arenas and are
/// reused warm by the next request; larger ones (full-size decodes of large photos) are mapped on
/// their own and unmapped when freed. Once a second, freed arena memory past ``trimAbove`` is
/// given back (`malloc_trim`). Before, every block past 256 KB was mapped afresh: each request
/// paid for its buffers' page faults and zeroing, a tenth of a cold request (BENCHMARKS.md,
/// 2026-12-04).
public enum HeapTrimming {
    /// The largest block served from the arenas; fixed, so glibc does not raise it to 32 MB.
    public static let mmapThreshold = 8 << 20
    /// Freed bytes the arenas may keep before a trim gives them back: glibc's own trim threshold
    /// too. Setting the mmap threshold fixes glibc's trim threshold at 128 KB, so each request's
    /// freed buffers at an arena's top went back to the kernel (`madvise`) and the next request
    /// faulted them in again, zeroed: 640 page faults per cold thumbnail, 13% of its CPU
    /// (BENCHMARKS.md, 2026-12-05).
    public static let trimAbove = 16 << 20

    /// Sets the threshold and trims every `interval` (then calls `tick`) until the returned task is cancelled. In a
    /// container (`limited`), threads share one arena per core rather than glibc's eight: each
    /// arena keeps freed memory of its own, and with the kernel's transparent huge pages on, a
    /// 256 MB group running sixteen thumbnails at once was OOM-killed with its anonymous memory
    /// 130 MB past what the work had reserved.
    public static func start(limited: Bool = false, every interval: Duration = .seconds(1), tick: (@Sendable () -> Void)? = nil) -> Task<Void, Never> {
        _ = imago_heap_set_mmap_threshold(Int32(mmapThreshold))
        _ = imago_heap_set_trim_threshold(Int32(trimAbove))
        if limited { _ = imago_heap_set_arena_max(Int32(max(1, ProcessInfo.processInfo.activeProcessorCount))) }
        return Task.detached(priority: .background) {
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                if imago_heap().free_held > trimAbove { _ = imago_heap_trim() }
                tick?()
            }
        }
    }
}
