import Foundation

/// `work` for each index below `count`, with a window of tasks in flight (every core kept busy,
/// memory bounded by the window), the results in index order.
func windowed<T: Sendable>(_ count: Int, _ work: @escaping @Sendable (Int) async -> T) async -> [T] {
    let window = max(4, ProcessInfo.processInfo.activeProcessorCount * 4)
    var results = [T?](repeating: nil, count: count)
    await withTaskGroup(of: (Int, T).self) { group in
        var next = 0
        func addNext() {
            guard next < count else { return }
            let index = next
            next += 1
            group.addTask { (index, await work(index)) }
        }
        for _ in 0..<window { addNext() }
        for await (index, result) in group {
            results[index] = result
            addNext()
        }
    }
    return results.compactMap { $0 }
}
