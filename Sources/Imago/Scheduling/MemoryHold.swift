import Synchronization

/// Bytes of a ``DecodeMemoryBudget`` that stay held after the pipeline delivers an image, for
/// work that continues on it (an encode): a request with ``ImageRequest/Options/holdsMemory``
/// gets one in ``ImageResponse/memoryHold``, carrying its share of the decode's reservation, so
/// the image is never outside the budget between its decode and its encode. Released by
/// ``release()`` or when the last reference goes.
public final class MemoryHold: Sendable {
    /// The bytes held.
    public let bytes: Int
    private let budget: DecodeMemoryBudget
    private let released = Atomic<Bool>(false)

    /// Takes over `bytes` the caller already holds in `budget`.
    init(adopting bytes: Int, in budget: DecodeMemoryBudget) {
        self.bytes = bytes
        self.budget = budget
    }

    /// Gives the bytes back to the budget (once; later calls do nothing).
    public func release() {
        guard !released.exchange(true, ordering: .acquiringAndReleasing) else { return }
        budget.release(bytes)
    }

    deinit { release() }
}
