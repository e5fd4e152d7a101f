import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

/// A real HTTP/1.1 server on 127.0.0.1, on a port the system picks, for tests, the demo and
/// benchmarks. It serves files and in-memory routes, misbehaves on request (latency, throttling,
/// redirects, bad lengths, truncation, resets, auth, conditional requests, ranges; see ``Route``)
/// and records every request and connection so a test can count transfers and wait for events
/// instead of sleeping.
public final class TestOrigin: Sendable {
    private struct Waiter {
        var predicate: @Sendable (Log) -> Bool
        var continuation: CheckedContinuation<Void, Never>
    }

    private struct State {
        var routes: [String: Route] = [:]
        /// What a path without a route of its own gets (nil: 404).
        var anyPath: Route?
        var log = Log()
        var waiters: [UInt64: Waiter] = [:]
        var nextWaiterID: UInt64 = 0
        var openGates: Set<String> = []
        var heldResponses: [String: [@Sendable () -> Void]] = [:]
        var onWaitGivenUp: (@Sendable (Log) -> Void)?
    }

    /// Whether the origin speaks https (with a self-signed certificate no client trusts).
    public let isTLS: Bool
    private let state = NIOLockedValueBox(State())
    private let listener = NIOLockedValueBox<(any Channel)?>(nil)

    private init(isTLS: Bool) {
        self.isTLS = isTLS
    }

    /// The port the origin listens on.
    public var port: Int {
        listener.withLockedValue { $0?.localAddress?.port ?? 0 }
    }

    /// Starts an origin on 127.0.0.1, serving every file under `directory` (if given) at its
    /// relative path, over https when `tls` is true.
    public static func start(serving directory: URL? = nil, tls: Bool = false) async throws -> TestOrigin {
        let sslContext: NIOSSLContext? =
            try tls
            ? NIOSSLContext(
                configuration: .makeServerConfiguration(
                    certificateChain: [.certificate(NIOSSLCertificate(bytes: Array(TestCertificate.certificatePEM.utf8), format: .pem))],
                    privateKey: .privateKey(NIOSSLPrivateKey(bytes: Array(TestCertificate.privateKeyPEM.utf8), format: .pem))
                )) : nil
        let origin = TestOrigin(isTLS: tls)
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(ChannelOptions.backlog, value: 1024)
            .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(ChannelOptions.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    if let sslContext {
                        try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: sslContext))
                    }
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
                    try channel.pipeline.syncOperations.addHandler(OriginHandler(origin: origin))
                }
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
        origin.listener.withLockedValue { $0 = channel }
        if let directory { try origin.serveFiles(under: directory) }
        return origin
    }

    /// Stops listening and closes the listening socket.
    public func shutdown() async throws {
        try await listener.withLockedValue { $0 }?.close()
    }

    /// The origin's root URL, `http://127.0.0.1:PORT`.
    public var baseURL: URL {
        URL(string: "\(isTLS ? "https" : "http")://127.0.0.1:\(port)")!
    }

    /// The URL of `path` (which may carry a query) on this origin.
    public func url(_ path: String) -> URL {
        URL(string: baseURL.absoluteString + (path.hasPrefix("/") ? path : "/" + path))!
    }

    // MARK: - Routes

    /// Serves `route` at `path`.
    public func setRoute(_ path: String, _ route: Route) {
        state.withLockedValue { $0.routes[path] = route }
    }

    /// Serves `data` at `path` with default behaviour; returns the URL.
    @discardableResult
    public func serve(_ data: Data, at path: String) -> URL {
        setRoute(path, Route(body: data))
        return url(path)
    }

    /// Changes the route at `path` in place.
    public func updateRoute(_ path: String, _ change: (inout Route) -> Void) {
        state.withLockedValue { state in
            guard var route = state.routes[path] else { return }
            change(&route)
            state.routes[path] = route
        }
    }

    /// Serves `route` at every path that has no route of its own (a store that answers every
    /// object alike: 500s, slowly); nil goes back to 404.
    public func setRouteForAnyPath(_ route: Route?) {
        state.withLockedValue { $0.anyPath = route }
    }

    func route(for path: String) -> Route? {
        state.withLockedValue { $0.routes[path] ?? $0.anyPath }
    }

    private func serveFiles(under directory: URL) throws {
        let root = directory.standardizedFileURL.path
        guard let walker = FileManager.default.enumerator(atPath: root) else { return }
        for case let relative as String in walker {
            let file = URL(fileURLWithPath: root).appendingPathComponent(relative)
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: file.path, isDirectory: &isDirectory), !isDirectory.boolValue else { continue }
            setRoute("/" + relative, Route(body: try Data(contentsOf: file)))
        }
    }

    // MARK: - Gates

    /// Releases every response held at the gate `name`, and lets later ones through at once.
    public func release(_ name: String) {
        let held = state.withLockedValue { state in
            state.openGates.insert(name)
            return state.heldResponses.removeValue(forKey: name) ?? []
        }
        for respond in held { respond() }
    }

    func whenGateOpens(_ name: String, _ respond: @escaping @Sendable () -> Void) {
        let isOpen = state.withLockedValue { state in
            if state.openGates.contains(name) { return true }
            state.heldResponses[name, default: []].append(respond)
            return false
        }
        if isOpen { respond() }
    }

    // MARK: - Log

    /// What the origin has seen so far.
    public var log: Log {
        state.withLockedValue { $0.log }
    }

    /// Suspends until `predicate` holds for the log (checked now and after every change).
    ///
    /// A watchdog, not a timing: a wait still unmet after `giveUpAfter` (default two minutes) ends,
    /// and ``onWaitGivenUp`` is told with the log as it stands, so a test that would hang fails
    /// and says what the origin saw instead.
    public func wait(until predicate: @escaping @Sendable (Log) -> Bool, giveUpAfter: Duration = .seconds(120)) async {
        await withCheckedContinuation { continuation in
            let id = state.withLockedValue { state -> UInt64? in
                if predicate(state.log) { return nil }
                state.nextWaiterID += 1
                state.waiters[state.nextWaiterID] = Waiter(predicate: predicate, continuation: continuation)
                return state.nextWaiterID
            }
            guard let id else { return continuation.resume() }
            let seconds = Double(giveUpAfter.components.seconds) + Double(giveUpAfter.components.attoseconds) * 1e-18
            DispatchQueue.global().asyncAfter(deadline: .now() + seconds) { [self] in
                let given = state.withLockedValue { state in state.waiters.removeValue(forKey: id).map { ($0, state.log, state.onWaitGivenUp) } }
                guard let (waiter, log, handler) = given else { return }
                handler?(log)
                waiter.continuation.resume()
            }
        }
    }

    /// Called with the log when a ``wait(until:giveUpAfter:)`` gives up; tests record an issue.
    public func onWaitGivenUp(_ handler: @escaping @Sendable (Log) -> Void) {
        state.withLockedValue { $0.onWaitGivenUp = handler }
    }

    /// Forgets the requests seen so far (connection counts stay).
    public func clearRequests() {
        updateLog { log in
            log.requests.removeAll()
            log.responses.removeAll()
        }
    }

    func updateLog(_ change: (inout Log) -> Void) {
        let ready = state.withLockedValue { state -> [CheckedContinuation<Void, Never>] in
            change(&state.log)
            let log = state.log
            let done = state.waiters.filter { $0.value.predicate(log) }
            for id in done.keys { state.waiters[id] = nil }
            return done.values.map(\.continuation)
        }
        for continuation in ready { continuation.resume() }
    }
}
