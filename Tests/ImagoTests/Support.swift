import Dispatch
import Foundation
#if canImport(Glibc)
    import Glibc
#endif
@testable import Imago
import ImagoTestSupport
import Testing

/// Runs `body` with a fresh origin and a pipeline made from `configure`, then checks the pipeline
/// left nothing running and shuts the origin down.
func withOrigin(
    tls: Bool = false,
    configure: (inout ImagePipeline.Configuration) -> Void = { _ in },
    isolation: isolated (any Actor)? = #isolation,
    _ body: (TestOrigin, ImagePipeline) async throws -> Void
) async throws {
    let origin = try await TestOrigin.start(tls: tls)
    origin.onWaitGivenUp { log in
        Issue.record(
            "a wait on the origin never came true: \(log.openConnections) connections open, \(log.abortedResponses) aborted, requests \(log.requests.map(\.path))"
        )
    }
    var configuration = ImagePipeline.Configuration()
    // Tests hold requests at gates while their own steps run; on a 2-core machine running the suite
    // in parallel those steps can wait many seconds for a thread, so the default stall timers (15 s
    // without bytes, 20 s to reach a rate) would fail a test for the machine's load. Tests of the
    // timers set their own.
    configuration.timeoutWithoutBytes = .seconds(600)
    configuration.minimumTransferRate = nil
    configure(&configuration)
    let pipeline = ImagePipeline(configuration: configuration)
    do {
        try await body(origin, pipeline)
        await pipeline.waitUntilIdle()
        // Idle means no transfer is left holding a request open: each was answered, or its
        // connection closed when it was cancelled (a leaked download would hold one forever).
        await origin.wait { $0.unansweredRequests == 0 }
    } catch {
        try? await origin.shutdown()
        throw error
    }
    try await origin.shutdown()
}

/// Bytes that look like nothing in particular, `count` long.
func payload(_ count: Int, seed: UInt8 = 7) -> Data {
    Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(seed)) })
}

/// The error a load ends with; fails the test if it succeeds.
func loadError(_ pipeline: ImagePipeline, _ request: ImageRequest, sourceLocation: SourceLocation = #_sourceLocation) async -> ImagoError? {
    do {
        let data = try await pipeline.data(for: request).data
        Issue.record("expected an error, got \(data.count) bytes", sourceLocation: sourceLocation)
        return nil
    } catch {
        return error
    }
}

/// Collects values from callbacks on any thread.
final class Recorder<Value: Sendable>: Sendable {
    private let values = Locked<[Value]>([])
    func append(_ value: Value) { values.withLock { $0.append(value) } }
    var all: [Value] { values.withLock { $0 } }
}

/// Lets a test wait until callbacks have happened `count` times, without sleeping.
final class Countdown: Sendable {
    private struct State {
        var remaining: Int
        var waiters: [CheckedContinuation<Void, Never>] = []
    }
    private let state: Locked<State>
    init(_ count: Int) { state = Locked(State(remaining: count)) }

    func signal() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.remaining -= 1
            guard state.remaining <= 0 else { return [] }
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    func wait() async {
        await withCheckedContinuation { continuation in
            let done = state.withLock { state in
                if state.remaining > 0 { state.waiters.append(continuation) }
                return state.remaining <= 0
            }
            if done { continuation.resume() }
        }
    }
}

/// Whether this test process runs under AddressSanitizer or ThreadSanitizer (`make sanitize`),
/// whose allocators replace glibc's.
var runsUnderSanitizer: Bool { dlsym(nil, "__asan_init") != nil || dlsym(nil, "__tsan_init") != nil }

/// Runs a program to completion; returns its exit status and standard output (with standard
/// error mixed in when `withStandardError`). The wait happens off the pool: a child blocking one
/// of the cooperative pool's two threads here for seconds starved the tests running beside it
/// (a prefetch test's held transfer then outlived its 20 s minimum-rate window).
func runProcess(_ executable: URL, _ arguments: [String], withStandardError: Bool = false) async throws -> (status: Int32, output: Data) {
    try await offThePool { try runProcessBlocking(executable, arguments, withStandardError: withStandardError) }
}

/// Runs blocking work (a child process, a wait) on a thread of its own and awaits it, so the
/// cooperative pool's threads stay free for the tests running beside it. Not on a GCD worker:
/// Foundation notices a child's exit on GCD, and with every worker blocked in `waitUntilExit`
/// (a hundred parallel tests running tools) no exit was ever noticed and the run hung.
func offThePool<T: Sendable, Failure: Error>(_ work: @escaping @Sendable () throws(Failure) -> T) async throws(Failure) -> T {
    let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<T, Failure>, Never>) in
        let thread = Thread { continuation.resume(returning: Result { () throws(Failure) -> T in try work() }) }
        thread.stackSize = 8 << 20
        thread.start()
    }
    return try result.get()
}

private func runProcessBlocking(_ executable: URL, _ arguments: [String], withStandardError: Bool) throws -> (status: Int32, output: Data) {
    let process = Process()
    process.executableURL = executable
    process.arguments = arguments
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = withStandardError ? pipe : FileHandle.nullDevice
    try process.run()
    let output = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, output)
}

/// Runs a command-line tool (exiftool, dwebp, img2webp, …) and fails the test if it fails.
func runTool(_ path: String, _ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation) async throws {
    let status = try await runProcess(URL(fileURLWithPath: path), arguments).status
    #expect(status == 0, "\(path) \(arguments.joined(separator: " ")) failed", sourceLocation: sourceLocation)
}

/// A fresh temporary directory, removed by the caller.
func temporaryDirectory() throws -> URL {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("imago-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    return directory
}

/// A loopback port that refuses connections for as long as the returned socket is open: bound but
/// not listening, so no other test's server can take the port meanwhile. Close the socket after.
func refusingPort() throws -> (port: Int, socket: Int32) {
    let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard socket >= 0 else { throw POSIXError(.EMFILE) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, length) == 0 && getsockname(socket, $0, &length) == 0 }
    }
    guard bound else {
        close(socket)
        throw POSIXError(.EADDRINUSE)
    }
    return (Int(UInt16(bigEndian: address.sin_port)), socket)
}

/// What every decoder owes hostile input: each of about 40 prefixes of `data` shorter than
/// `truncatedBelow` (default: all of it) is an ``ImagoError``, and 50 copies with four bytes
/// changed decode or fail cleanly, never crash.
func expectCleanFailures(
    _ decoder: some ImageDecoding, _ data: Data, truncatedBelow end: Int? = nil, sourceLocation: SourceLocation = #_sourceLocation
) {
    let end = end ?? data.count
    for length in stride(from: 0, to: end, by: max(1, data.count / 40)) {
        #expect(throws: ImagoError.self, "cut at \(length)", sourceLocation: sourceLocation) {
            _ = try decoder.decode(data.prefix(length), options: DecodingOptions())
        }
    }
    var generator = SplitMix(seed: UInt64(data.count))
    for _ in 0..<50 {
        var mutated = [UInt8](data)
        for _ in 0..<4 { mutated[Int(generator.next() % UInt64(mutated.count))] = UInt8(truncatingIfNeeded: generator.next()) }
        _ = try? decoder.decode(Data(mutated), options: DecodingOptions())
    }
}

extension Image {
    /// A one-frame image of RGBA8 `pixels` whose metadata says it is a PNG of this size.
    static func test(_ width: Int, _ height: Int, _ pixels: [UInt8], alpha: Bool = false) -> Image {
        Image(
            width: width, height: height, frames: [.init(pixels: pixels)],
            metadata: .init(format: .png, originalWidth: width, originalHeight: height, hasAlpha: alpha))
    }
}

/// Sets the colour of pixel (x, y) of RGBA8 `pixels` `width` wide, alpha untouched.
func paint(_ pixels: inout [UInt8], width: Int, _ x: Int, _ y: Int, _ color: (UInt8, UInt8, UInt8)) {
    let offset = (y * width + x) * 4
    (pixels[offset], pixels[offset + 1], pixels[offset + 2]) = color
}
