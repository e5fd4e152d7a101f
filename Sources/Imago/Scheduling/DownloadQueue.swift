import DequeModule

/// Transfers waiting for a download slot: one lane per priority, FIFO or LIFO within a lane.
///
/// Removal is lazy: a transfer whose priority changes is pushed again with a new token, and entries
/// whose token no longer matches are skipped when popped. That keeps push, re-prioritise and cancel O(1).
struct DownloadQueue {
    struct Entry {
        var transferID: UInt64
        var token: UInt64
    }

    private var lanes = Array(repeating: Deque<Entry>(), count: ImageRequest.Priority.allCases.count)
    let order: ImagePipeline.ExecutionOrder

    init(order: ImagePipeline.ExecutionOrder) {
        self.order = order
    }

    mutating func push(_ entry: Entry, priority: ImageRequest.Priority) {
        lanes[priority.rawValue].append(entry)
    }

    /// The next entry, highest priority first, skipping entries `isCurrent` rejects.
    mutating func pop(isCurrent: (Entry) -> Bool) -> Entry? {
        for lane in lanes.indices.reversed() {
            while let entry = (order == .fifo ? lanes[lane].popFirst() : lanes[lane].popLast()) {
                if isCurrent(entry) { return entry }
            }
        }
        return nil
    }
}
