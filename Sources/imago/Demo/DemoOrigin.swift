import Foundation
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle
import Imago

/// The demo's origin: a Hummingbird server on 127.0.0.1 serving sample files with its file
/// middleware (Content-Length, ETag, Last-Modified, `304` on If-None-Match, Range), the real
/// server component `imago serve` builds on. Files under `/fresh/` are fresh for an hour; files
/// under `/revalidate/` carry `no-cache`, so a cache must revalidate them each time. Bodies are
/// throttled to `bytesPerSecond` so progress is visible.
final class DemoOrigin: Sendable {
    /// Where the origin answers, such as `http://127.0.0.1:53211`.
    let baseURL: URL
    private let group: ServiceGroup
    private let running: Task<Void, any Error>

    private init(baseURL: URL, group: ServiceGroup, running: Task<Void, any Error>) {
        self.baseURL = baseURL
        self.group = group
        self.running = running
    }

    /// Starts serving `root`'s `fresh` and `revalidate` folders on a free port.
    static func start(root: URL, bytesPerSecond: Int?) async throws -> DemoOrigin {
        let router = Router()
        if let bytesPerSecond { router.add(middleware: ThrottleMiddleware(bytesPerSecond: bytesPerSecond)) }
        router.add(
            middleware: FileMiddleware(
                root.appendingPathComponent("fresh").path, urlBasePath: "/fresh",
                cacheControl: CacheControl([(MediaType(type: .image), [.maxAge(3600)])])
            ))
        router.add(
            middleware: FileMiddleware(
                root.appendingPathComponent("revalidate").path, urlBasePath: "/revalidate",
                cacheControl: CacheControl([(MediaType(type: .image), [.noCache])])
            ))
        var logger = Logger(label: "imago-demo-origin")
        logger.logLevel = .warning
        let (ports, portContinuation) = AsyncStream.makeStream(of: Int.self)
        let application = Application(
            router: router,
            configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in
                portContinuation.yield(channel.localAddress?.port ?? 0)
                portContinuation.finish()
            },
            logger: logger
        )
        let group = ServiceGroup(configuration: .init(services: [application], gracefulShutdownSignals: [], logger: logger))
        let running = Task { try await group.run() }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next(), port > 0 else {
            running.cancel()
            throw DemoOriginError.didNotStart
        }
        return DemoOrigin(baseURL: URL(string: "http://127.0.0.1:\(port)")!, group: group, running: running)
    }

    /// Stops accepting, lets responses in flight finish, and returns when the server has stopped.
    func shutdown() async throws {
        await group.triggerGracefulShutdown()
        try await running.value
    }

    enum DemoOriginError: Error, CustomStringConvertible {
        case didNotStart
        var description: String { "the demo origin did not start" }
    }
}

/// Paces response bodies to a byte rate: each chunk is held until the time its bytes take at
/// that rate has passed since the response began.
struct ThrottleMiddleware<Context: RequestContext>: RouterMiddleware {
    let bytesPerSecond: Int

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response = try await next(request, context)
        let rate = Double(bytesPerSecond)
        let start = ContinuousClock.now
        let sent = ByteCounter()
        response.body = response.body.map { buffer in
            let total = sent.add(buffer.readableBytes)
            try await Task.sleep(until: start + .seconds(Double(total) / rate), clock: .continuous)
            return buffer
        }
        return response
    }
}

/// Bytes sent so far by one response.
private final class ByteCounter: Sendable {
    private let count = Locked(0)

    func add(_ bytes: Int) -> Int {
        count.withLock { count in
            count += bytes
            return count
        }
    }
}
