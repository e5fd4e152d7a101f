import Foundation
import Imago

/// The memory limit of the control group the process runs in, as a container runtime or systemd
/// sets it, and where its current use is read: cgroup v2's `memory.max` and `memory.current`
/// (the lowest limit of the group and its ancestors), or v1's `memory.stat`
/// `hierarchical_memory_limit` (else `memory.limit_in_bytes`) and `memory.usage_in_bytes`.
/// nil when no limit is set. The server sizes its caches and decode budget from it and sheds
/// new work (503) as use nears it, so the kernel's OOM killer is not what stops it.
public struct ContainerMemory: Sendable, Equatable {
    /// The limit in bytes.
    public let limit: Int
    /// The file that says how much the group uses now.
    public let usageFile: String
    /// The group's `memory.stat`, whose inactive file pages do not count as used.
    public let statFile: String?

    /// A limit of `limit` bytes whose use `usageFile` tells (less `statFile`'s inactive file pages).
    public init(limit: Int, usageFile: String, statFile: String? = nil) {
        self.limit = limit
        self.usageFile = usageFile
        self.statFile = statFile
    }

    /// Bytes the group uses now, less the page cache the kernel would reclaim first (its working
    /// set, as the kubelet counts it: a disk cache's writes fill the page cache up to the limit);
    /// nil when the file cannot be read.
    public func usage() -> Int? { MemoryPressureMonitor.workingSet(usage: usageFile, stat: statFile).map { Int($0) } }

    /// The limit of this process's group: `/proc/self/cgroup` names it, and its files are under
    /// `root` (`/sys/fs/cgroup`; inside a container's cgroup namespace the group is often the
    /// root itself, which is tried too).
    public static func current(cgroupFile: String = "/proc/self/cgroup", root: String = "/sys/fs/cgroup") -> ContainerMemory? {
        guard let text = try? String(contentsOfFile: cgroupFile, encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
            guard parts.count == 3 else { continue }
            let path = String(parts[2])
            if parts[1].split(separator: ",").contains("memory"), let found = version1(root + "/memory", path) { return found }
            if parts[0] == "0", parts[1].isEmpty, let found = version2(root, path) { return found }
        }
        return nil
    }

    /// v1: the group's directory (or the hierarchy's root), its hierarchical limit.
    private static func version1(_ hierarchy: String, _ path: String) -> ContainerMemory? {
        for directory in [hierarchy + path, hierarchy] where FileManager.default.fileExists(atPath: directory + "/memory.usage_in_bytes") {
            let stat = (try? String(contentsOfFile: directory + "/memory.stat", encoding: .utf8)) ?? ""
            let hierarchical = stat.split(separator: "\n").first { $0.hasPrefix("hierarchical_memory_limit ") }
                .flatMap { Int($0.split(separator: " ").last ?? "") }
            guard let limit = hierarchical ?? number(directory + "/memory.limit_in_bytes"), limit < 1 << 60 else { return nil }
            return ContainerMemory(limit: limit, usageFile: directory + "/memory.usage_in_bytes", statFile: directory + "/memory.stat")
        }
        return nil
    }

    /// v2: the lowest `memory.max` of the group and its ancestors.
    private static func version2(_ root: String, _ path: String) -> ContainerMemory? {
        var components = path.split(separator: "/").map(String.init)
        var directory = root + (components.isEmpty ? "" : "/" + components.joined(separator: "/"))
        if !FileManager.default.fileExists(atPath: directory + "/memory.current") {
            // Inside a cgroup namespace the group is mounted as the root.
            (directory, components) = (root, [])
        }
        guard FileManager.default.fileExists(atPath: directory + "/memory.current") else { return nil }
        let usage = directory + "/memory.current"
        var lowest: Int?
        while true {
            let here = root + (components.isEmpty ? "" : "/" + components.joined(separator: "/"))
            if let limit = number(here + "/memory.max") { lowest = min(lowest ?? limit, limit) }
            guard !components.isEmpty else { break }
            components.removeLast()
        }
        return lowest.map { ContainerMemory(limit: $0, usageFile: usage, statFile: directory + "/memory.stat") }
    }

    /// A file's decimal number (`max` and anything else: nil).
    private static func number(_ file: String) -> Int? {
        guard let handle = FileHandle(forReadingAtPath: file) else { return nil }
        defer { try? handle.close() }
        guard let data = try? handle.read(upToCount: 64) else { return nil }
        return Int(String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
    }
}

extension ServerConfiguration {
    /// Sizes what `--memory-bytes` and the decode budget leave unset from a container's limit:
    /// kept variants (with the paths and resumable bytes) an eighth of it (16–256 MB); decodes,
    /// their steps and their encodes at once what is left after those and ``unbudgetedBytes``
    /// (at least a quarter of the limit, at most the default 1 GiB), each reserved at the scale it
    /// will decode (a fit-300 thumbnail of a 48 MP JPEG reserves 3 MB, its full-size PNG 384 MB;
    /// docs/LIMITS.md). New work is shed with 503 past nine tenths in use.
    public mutating func fit(into container: ContainerMemory, keepsMemoryBytes: Bool) {
        if !keepsMemoryBytes { memoryBytes = min(max(container.limit / 8, 16 << 20), 256 << 20) }
        if decodeMemoryBytes == nil {
            decodeMemoryBytes = min(max(container.limit - memoryBytes - Self.unbudgetedBytes, container.limit / 4), 1 << 30)
        }
        containerMemory = container
    }

    /// What a container's memory must hold besides the kept bytes and the decode budget: the
    /// process itself (about 30 MB resident: code, runtime, threads), sources being downloaded
    /// (a decode's reservation counts its source only once it has arrived), and what glibc's
    /// arenas keep of freed memory between trims (``HeapTrimming/trimAbove`` and fragmentation).
    /// 96 MB: in 256 MB with this budget, sixteen clients thumbnailing 9 MP PNGs and JPEGs peak
    /// under the limit, where three quarters of it for the budget were OOM-killed.
    public static let unbudgetedBytes = 96 << 20
}
