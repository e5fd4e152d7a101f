import Dispatch
import Foundation

/// Something that can give memory back when the process is short of it.
public protocol MemoryPressureHandling: AnyObject, Sendable {
    /// Called on the monitor's queue when the cgroup reports pressure.
    func handleMemoryPressure()
}

extension MemoryCache: MemoryPressureHandling {}

/// Watches the process's cgroup for memory pressure, as Linux reports it, and tells the handlers
/// that registered (every pipeline registers its memory cache): cgroup v2's pressure stall
/// information (`memory.pressure`, `some avg10` at or above ``stallThreshold`` percent) or usage
/// (`memory.current` at or above ``usageThreshold`` of `memory.max`), else cgroup v1's
/// `memory.usage_in_bytes` against `memory.limit_in_bytes`. Where none of those files exists, or
/// the limit is unset, it does nothing. The files are read every ``interval`` once a handler
/// registers, on a utility queue; a pressure reported at one reading is acted on once until the
/// pressure has ended.
public final class MemoryPressureMonitor: Sendable {
    /// Where the cgroup's memory files are.
    public struct Files: Sendable, Hashable {
        /// Bytes in use now (`memory.current`, or v1's `memory.usage_in_bytes`).
        public var usage: String
        /// The limit (`memory.max`, or v1's `memory.limit_in_bytes`).
        public var limit: String
        /// v2's pressure stall information, when there is one.
        public var pressure: String?
        /// `memory.stat`, whose inactive file pages are taken off the usage (``workingSet(usage:stat:)``).
        public var stat: String?

        /// Names the files to read (tests point them at files of their own).
        public init(usage: String, limit: String, pressure: String? = nil, stat: String? = nil) {
            self.usage = usage
            self.limit = limit
            self.pressure = pressure
            self.stat = stat
        }

        /// This process's cgroup files, read from `/proc/self/cgroup`; nil where there are none.
        public static func forCurrentProcess(root: String = "/sys/fs/cgroup") -> Files? {
            let lines = ((try? String(contentsOfFile: "/proc/self/cgroup", encoding: .utf8)) ?? "").split(separator: "\n")
            func path(_ line: Substring?) -> String? { line.flatMap { $0.split(separator: ":", maxSplits: 2).last.map(String.init) } }
            if let unified = path(lines.first { $0.hasPrefix("0::") }) {
                let directory = root + (unified == "/" ? "" : unified)
                if FileManager.default.fileExists(atPath: directory + "/memory.max") {
                    return Files(
                        usage: directory + "/memory.current", limit: directory + "/memory.max", pressure: directory + "/memory.pressure",
                        stat: directory + "/memory.stat")
                }
            }
            if let memory = path(lines.first { $0.split(separator: ":").dropFirst().first?.split(separator: ",").contains("memory") == true }) {
                let directory = root + "/memory" + (memory == "/" ? "" : memory)
                if FileManager.default.fileExists(atPath: directory + "/memory.limit_in_bytes") {
                    return Files(usage: directory + "/memory.usage_in_bytes", limit: directory + "/memory.limit_in_bytes", stat: directory + "/memory.stat")
                }
            }
            return nil
        }
    }

    /// The monitor of this process's cgroup, which pipelines register their memory caches with.
    public static let shared = MemoryPressureMonitor(files: .forCurrentProcess())

    /// The files read; nil when the process has none (the monitor then does nothing).
    public let files: Files?
    /// Usage at or above this fraction of the limit is pressure. Default 0.9.
    public let usageThreshold: Double
    /// `some avg10` at or above this percentage is pressure. Default 10.
    public let stallThreshold: Double
    /// Time between readings. Default 5 s.
    public let interval: Duration

    private struct State {
        var handlers: [Weak] = []
        var timer: (any DispatchSourceTimer)?
        var underPressure = false
    }

    private struct Weak {
        weak var handler: (any MemoryPressureHandling)?
    }

    private let state = Locked(State())
    private let queue = DispatchQueue(label: "imago.memory-pressure", qos: .utility)

    /// A monitor of `files`.
    public init(files: Files?, usageThreshold: Double = 0.9, stallThreshold: Double = 10, interval: Duration = .seconds(5)) {
        self.files = files
        self.usageThreshold = usageThreshold
        self.stallThreshold = stallThreshold
        self.interval = interval
    }

    deinit {
        state.withLock { $0.timer?.cancel() }
    }

    /// Tells `handler` of pressure from now on, until it is deallocated. Starts the readings.
    public func register(_ handler: any MemoryPressureHandling) {
        guard files != nil else { return }
        let startsTimer = state.withLock { state -> Bool in
            state.handlers.removeAll { $0.handler == nil }
            if !state.handlers.contains(where: { $0.handler === handler }) { state.handlers.append(Weak(handler: handler)) }
            return state.timer == nil
        }
        guard startsTimer else { return }
        let timer = DispatchSource.makeTimerSource(queue: queue)
        let nanoseconds = max(1, interval.components.seconds * 1_000_000_000 + interval.components.attoseconds / 1_000_000_000)
        timer.schedule(deadline: .now() + .nanoseconds(Int(nanoseconds)), repeating: .nanoseconds(Int(nanoseconds)))
        timer.setEventHandler { [weak self] in _ = self?.check() }
        state.withLock { $0.timer = timer }
        timer.resume()
    }

    /// Reads the files once; on pressure that was not already reported, tells every handler.
    /// Returns whether the cgroup is under pressure now.
    @discardableResult
    public func check() -> Bool {
        guard let files else { return false }
        let pressure = Self.isUnderPressure(files: files, usageThreshold: usageThreshold, stallThreshold: stallThreshold)
        let handlers = state.withLock { state -> [any MemoryPressureHandling] in
            defer { state.underPressure = pressure }
            guard pressure, !state.underPressure else { return [] }
            return state.handlers.compactMap(\.handler)
        }
        for handler in handlers { handler.handleMemoryPressure() }
        return pressure
    }

    static func isUnderPressure(files: Files, usageThreshold: Double, stallThreshold: Double) -> Bool {
        func read(_ path: String) -> String? {
            (try? String(contentsOfFile: path, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        if let pressure = files.pressure.flatMap(read), let stall = someAverage10(pressure), stall >= stallThreshold { return true }
        // An unset limit reads "max" (v2) or a number near Int64.max (v1): no pressure from usage.
        guard let usage = workingSet(usage: files.usage, stat: files.stat), let limit = read(files.limit).flatMap(Int64.init),
            limit > 0, limit < Int64.max / 2
        else { return false }
        return Double(usage) >= Double(limit) * usageThreshold
    }

    /// A cgroup's working set, as the kubelet counts it: its usage (`usage`, v2's `memory.current`
    /// or v1's `memory.usage_in_bytes`) less the inactive file pages `stat` (`memory.stat`) lists
    /// (v2's `inactive_file`, v1's `total_inactive_file`): the page cache of files written and read,
    /// which the kernel reclaims before it would kill anything, is not what is short. nil when
    /// the usage cannot be read.
    public static func workingSet(usage: String, stat: String?) -> Int64? {
        guard let handle = FileHandle(forReadingAtPath: usage) else { return nil }
        defer { try? handle.close() }
        guard let data = try? handle.read(upToCount: 64),
            let bytes = Int64(String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
        else { return nil }
        guard let stat, let text = try? String(contentsOfFile: stat, encoding: .utf8) else { return bytes }
        var inactive: Int64 = 0
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: " ")
            guard parts.count == 2 else { continue }
            // v1 lists the group's own and, prefixed total_, its subtree's; v2 only the subtree's.
            if parts[0] == "total_inactive_file" || (parts[0] == "inactive_file" && inactive == 0) { inactive = Int64(parts[1]) ?? 0 }
        }
        return max(0, bytes - inactive)
    }

    /// `some avg10=12.50 avg60=…` → 12.5.
    static func someAverage10(_ text: String) -> Double? {
        guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix("some ") }),
            let field = line.split(separator: " ").first(where: { $0.hasPrefix("avg10=") })
        else { return nil }
        return Double(field.dropFirst("avg10=".count))
    }
}
