import Foundation
import Glibc

@testable import Imago

/// A program a test runs as its peer (tinyproxy, nginx, danted), in the foreground, its standard
/// output and error read from one pipe. It is ready when its log says so; after that the log is
/// read without blocking whenever it is asked for, so a line the peer wrote before it answered a
/// request is there once the answer is, with no race and no sleep.
///
/// Started with posix_spawn and reaped with waitpid, not with Foundation's `Process`: Foundation
/// learns of a child's end when a socket the child inherited closes, and then waits for that
/// child, blocking. danted closes every descriptor it inherited as it starts, so Foundation's one
/// watcher waited for a running danted and no other process's end was ever noticed: every test
/// running a tool beside it hung.
final class PeerProcess: Sendable {
    let pid: pid_t
    /// The peer's own files (configuration, logs), removed when it stops.
    let folder: URL
    private let output: Int32
    private let lines = Locked("")

    /// What it logged so far.
    var log: String {
        while readChunk() > 0 {}
        return lines.withLock { $0 }
    }

    /// Returns once the log contains `text`, waiting for the pipe to have bytes (poll(2)), not
    /// for a time; false when `giveUpAfter` passes first. For a peer that logs after it acts (a
    /// connection's line once it is set up).
    func waitForLog(_ text: String, giveUpAfter: Duration = .seconds(30)) async -> Bool {
        let descriptor = output
        let end = ContinuousClock.now + giveUpAfter
        return await offThePool {
            while !self.log.contains(text) {
                let left = end - ContinuousClock.now
                guard left > .zero else { return false }
                var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
                let milliseconds = Int32(min(left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000, 60_000))
                if poll(&entry, 1, max(1, milliseconds)) == 0 { return self.log.contains(text) }
            }
            return true
        }
    }

    private init(pid: pid_t, folder: URL, output: Int32) {
        self.pid = pid
        self.folder = folder
        self.output = output
    }

    /// One read(2) of the log pipe into `lines` (FileHandle.read(upToCount:) would wait for the
    /// whole count or the end); its count, 0 or less when nothing came.
    private func readChunk() -> Int {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = read(output, &buffer, buffer.count)
        if count > 0 { lines.withLock { $0 += String(decoding: buffer[..<count], as: UTF8.self) } }
        return count
    }

    /// Runs `executable` with `arguments` and returns once its log contains `ready`; throws
    /// (and stops it) when it ends first.
    static func start(_ executable: String, _ arguments: [String], folder: URL, readyWhen ready: String) async throws -> PeerProcess {
        let pid = try spawn(executable, arguments)
        let peer = PeerProcess(pid: pid.pid, folder: folder, output: pid.output)
        // Blocking reads until it is ready (or ends, when it could not start).
        await offThePool {
            while !peer.lines.withLock({ $0.contains(ready) }), peer.readChunk() > 0 {}
        }
        _ = fcntl(peer.output, F_SETFL, fcntl(peer.output, F_GETFL) | O_NONBLOCK)
        guard peer.log.contains(ready) else {
            await peer.stop()
            throw POSIXError(.ECONNREFUSED)
        }
        return peer
    }

    /// posix_spawn with standard output and error on a new pipe, every other descriptor closed,
    /// and no signal blocked or ignored (the test runner's mask would otherwise be inherited).
    private static func spawn(_ executable: String, _ arguments: [String]) throws -> (pid: pid_t, output: Int32) {
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, ends[1], 1)
        posix_spawn_file_actions_adddup2(&actions, ends[1], 2)
        _ = closeFrom(&actions, 3)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t()
        sigemptyset(&none)
        var all = sigset_t()
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid = pid_t()
        let status = posix_spawn(&pid, executable, &actions, &attributes, argv, environ)
        close(ends[1])
        guard status == 0 else {
            close(ends[0])
            throw POSIXError(POSIXErrorCode(rawValue: status) ?? .EIO)
        }
        return (pid, ends[0])
    }

    /// glibc's posix_spawn_file_actions_addclosefrom_np (2.34), which Swift's Glibc module does
    /// not declare (it is a GNU extension).
    private static let closeFrom: @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32 = {
        guard let symbol = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np") else { fatalError("glibc 2.34 or later is needed") }
        return unsafeBitCast(symbol, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self)
    }()

    /// Kills it and every process it started (nothing of them needs keeping) and waits for it,
    /// then removes its folder.
    func stop() async {
        let family = [pid] + Self.descendants(of: pid)
        for member in family { kill(member, SIGKILL) }
        let pid = pid
        await offThePool {
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0, errno == EINTR {}
        }
        try? FileManager.default.removeItem(at: folder)
    }

    // Closed only here, so a log read after `stop` never reads a descriptor reused meanwhile.
    deinit { close(output) }

    /// The processes `pid` started, and theirs, read from /proc.
    static func descendants(of pid: Int32) -> [Int32] {
        var parents: [Int32: [Int32]] = [:]
        for name in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let child = Int32(name), let stat = try? String(contentsOfFile: "/proc/\(name)/stat", encoding: .utf8),
                let close = stat.lastIndex(of: ")")
            else { continue }
            // After the command in parentheses: state, then the parent's pid.
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            if fields.count > 1, let parent = Int32(fields[1]) { parents[parent, default: []].append(child) }
        }
        var found: [Int32] = []
        var queue = parents[pid] ?? []
        while let next = queue.popLast() {
            found.append(next)
            queue += parents[next] ?? []
        }
        return found
    }

    /// A port nothing listens on now (bound to 0 and released: the peers cannot be told port 0).
    static func freePort() throws -> Int {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else { throw POSIXError(.EADDRINUSE) }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { _ = getsockname(socket, $0, &length) }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}

/// A test's peer program with what it offers (an origin, a proxy): stopping it stops the program.
protocol TestPeer: Sendable {
    var peer: PeerProcess { get }
}

extension TestPeer {
    func stop() async {
        await peer.stop()
    }
}

/// Runs `body` with the peer `start` makes, stopped after whatever `body` throws.
func withPeer<Peer: TestPeer>(_ start: () async throws -> Peer, _ body: (Peer) async throws -> Void) async throws {
    let peer = try await start()
    do {
        try await body(peer)
    } catch {
        await peer.stop()
        throw error
    }
    await peer.stop()
}
