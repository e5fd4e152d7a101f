import Foundation

/// Timing and process helpers shared by the benchmarks.
enum Measure {
    /// Seconds `body` takes.
    static func seconds(_ body: () async throws -> Void) async rethrows -> Double {
        let start = ContinuousClock.now
        try await body()
        return (ContinuousClock.now - start) / .seconds(1)
    }

    /// Seconds `body` takes, for work that does not suspend (``seconds(_:)``'s synchronous twin).
    static func elapsed(_ body: () throws -> Void) rethrows -> Double {
        let start = ContinuousClock.now
        try body()
        return (ContinuousClock.now - start) / .seconds(1)
    }

    /// CPU seconds (user + system) used so far by this process (`RUSAGE_SELF`) or by its children
    /// that have ended and been waited for (`RUSAGE_CHILDREN`).
    static func cpuSeconds(children: Bool = false) -> Double {
        var usage = rusage()
        getrusage(children ? RUSAGE_CHILDREN.rawValue : RUSAGE_SELF.rawValue, &usage)
        func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1_000_000 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }

    /// Times `imago` and `peer` (each returns its seconds) in `rounds` pairs whose order
    /// alternates, so a drift in the machine's speed (2–3× within seconds here) hits both sides of
    /// a pair alike. Returns each side's times and the median pair's ratio, the peer's time over
    /// Imago's (above 1: Imago was faster).
    static func pairedRounds(
        _ rounds: Int, imago: () async throws -> Double, peer: () async throws -> Double
    ) async rethrows -> (imago: [Double], peer: [Double], ratio: Double) {
        var imagoTimes: [Double] = [], peerTimes: [Double] = [], ratios: [Double] = []
        for round in 0..<rounds {
            let imagoSeconds: Double, peerSeconds: Double
            if round.isMultiple(of: 2) {
                imagoSeconds = try await imago()
                peerSeconds = try await peer()
            } else {
                peerSeconds = try await peer()
                imagoSeconds = try await imago()
            }
            imagoTimes.append(imagoSeconds)
            peerTimes.append(peerSeconds)
            ratios.append(peerSeconds / imagoSeconds)
        }
        return (imagoTimes, peerTimes, median(ratios))
    }

    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        return sorted[sorted.count / 2]
    }

    /// Runs a program to completion and returns what it wrote on standard output (or, with
    /// `standardError`, on standard error: dwebp reports timings there); throws on a non-zero exit.
    @discardableResult
    static func run(_ executable: String, _ arguments: [String], standardError: Bool = false, environment: [String: String] = [:]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if !environment.isEmpty { process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 } }
        let pipe = Pipe()
        if standardError {
            process.standardError = pipe
            process.standardOutput = FileHandle.nullDevice
        } else {
            process.standardOutput = pipe
        }
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw BenchmarkError("\(executable) \(arguments.prefix(3).joined(separator: " ")) exited with \(process.terminationStatus)")
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// Runs a program to completion with its output to /dev/null, through posix_spawn and waitpid:
    /// Foundation's `Process` adds tens of milliseconds per run on Linux (its exit is polled), which
    /// would drown a start-up time. Throws on a non-zero exit.
    static func spawn(_ executable: String, _ arguments: [String]) throws {
        _ = try spawnMeasured(executable, arguments)
    }

    /// ``spawn(_:_:)``, returning the child's peak resident memory in MB (wait4's `ru_maxrss`).
    @discardableResult
    static func spawnMeasured(_ executable: String, _ arguments: [String]) throws -> Double {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, executable, &actions, nil, argv, environ)
        guard spawned == 0 else { throw BenchmarkError("\(executable) could not be started (\(spawned))") }
        var status: Int32 = 0
        var usage = rusage()
        while wait4(pid, &status, 0, &usage) < 0 && errno == EINTR {}
        guard status == 0 else { throw BenchmarkError("\(executable) \(arguments.prefix(3).joined(separator: " ")) exited with status \(status)") }
        return Double(usage.ru_maxrss) / 1024
    }

    /// A `/proc/self/status` field in MB (VmRSS: now, VmHWM: peak).
    static func memoryMB(_ field: String) -> Double {
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix(field + ":") } ?? ""
        let kilobytes = Double(line.split(separator: " ").dropFirst().first ?? "0") ?? 0
        return kilobytes / 1024
    }

    /// Random bytes: every payload differs, so nothing can dedupe them.
    static func payload(_ count: Int) -> Data {
        var generator = SystemRandomNumberGenerator()
        var words = (0..<(count + 7) / 8).map { _ in generator.next() }
        return words.withUnsafeMutableBytes { Data($0.prefix(count)) }
    }
}

struct BenchmarkError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

enum Machine {
    static func describe() -> String {
        let cpuinfo = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
        let model =
            cpuinfo.split(separator: "\n").first { $0.hasPrefix("model name") }?
            .split(separator: ":").last?.trimmingCharacters(in: .whitespaces) ?? "unknown CPU"
        let memory = ProcessInfo.processInfo.physicalMemory / 1_073_741_824
        return "\(model), \(ProcessInfo.processInfo.activeProcessorCount) cores, \(memory) GiB"
    }
}

/// Prints one benchmark line: Imago's figure, the peer's, and the ratio against the target.
func report(_ name: String, imago: String, peer: String, ratio: Double, target: String, met: Bool) {
    print("\(name)")
    print("  imago: \(imago)")
    print("  peer:  \(peer)")
    print("  ratio: \(String(format: "%.2f", ratio))×  target \(target)  \(met ? "MET" : "NOT MET")")
    print("")
}
