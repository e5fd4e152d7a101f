import Hummingbird
import HummingbirdCore
import Imago
import Logging
import NIOCore
import NIOExtras
import NIOHTTP1
import NIOPosix
import ServiceLifecycle

/// The image server's listening socket and its connections, a service for a `ServiceGroup`:
/// Hummingbird's application server with imgproxy's listener. Its socket may be shared by
/// several processes on one port (``ServerConfiguration/reusesPort``, imgproxy's
/// `IMGPROXY_SO_REUSEPORT`: Hummingbird's own server sets no such option); connections past
/// ``ServerConfiguration/maxClients`` wait to be accepted; each connection carries
/// ``ImageServer/router(service:)``'s answers with the service's connection deadlines
/// (the request head's, the keep-alive's and the write's). A graceful shutdown (SIGTERM) closes the socket at
/// once and lets every connection finish the request it carries; then `run()` returns.
public struct ImageListener: Service {
    private let service: ImageService
    private let host: String
    private let port: Int
    private let logger: Logger
    private let onListening: @Sendable (any Channel) async -> Void

    /// A listener for `service` on `host`:`port` (port 0: one the system picks), or on
    /// ``ServerConfiguration/listenSocketPath`` when the configuration has one.
    /// `onListening` is called with the listening channel once it accepts connections.
    public init(
        service: ImageService, host: String, port: Int, logger: Logger,
        onListening: @escaping @Sendable (any Channel) async -> Void = { _ in }
    ) {
        self.service = service
        self.host = host
        self.port = port
        self.logger = logger
        self.onListening = onListening
    }

    /// Listens until a graceful shutdown, then returns when the last connection has closed.
    public func run() async throws {
        let connection = HTTP1Channel(
            responder: Self.responder(ImageServer.router(service: service).buildResponder(), logger: logger),
            configuration: .init(additionalChannelHandlers: ImageServer.connectionHandlers(service)))
        let group = MultiThreadedEventLoopGroup.singleton
        let quiescing = ServerQuiescingHelper(group: group)
        let configuration = service.configuration
        let logger = logger
        var bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.allowRemoteHalfClosure, value: true)
        if configuration.reusesPort, configuration.listenSocketPath == nil {
            // Before bind, as the kernel checks it there: every process on the port must set it.
            bootstrap = bootstrap.serverChannelOption(.socketOption(.init(rawValue: SO_REUSEPORT)), value: 1)
        }
        bootstrap = bootstrap.serverChannelInitializer { channel in
            channel.eventLoop.makeCompletedFuture {
                if configuration.maxClients > 0 {
                    try channel.pipeline.syncOperations.addHandler(AvailableConnectionsChannelHandler(maxConnections: configuration.maxClients))
                }
                try channel.pipeline.syncOperations.addHandler(quiescing.makeServerChannelHandler(channel: channel))
            }
        }
        let listening: NIOAsyncChannel<HTTP1Channel.Value, Never>
        if let path = configuration.listenSocketPath {
            listening = try await bootstrap.bind(unixDomainSocketPath: path, cleanupExistingSocketFile: true, serverBackPressureStrategy: nil) {
                connection.setup(channel: $0, logger: logger)
            }
        } else {
            listening = try await bootstrap.bind(host: host, port: port, serverBackPressureStrategy: nil) {
                connection.setup(channel: $0, logger: logger)
            }
        }
        await withGracefulShutdownHandler {
            await onListening(listening.channel)
            await withDiscardingTaskGroup { connections in
                do {
                    try await listening.executeThenClose { accepted in
                        for try await child in accepted {
                            connections.addTask { await connection.handle(value: child, logger: logger) }
                        }
                    }
                } catch {
                    logger.error("the listening socket failed: \(error)")
                }
            }
        } onGracefulShutdown: {
            // Closes the socket, then asks each connection to close after its current answer.
            quiescing.initiateShutdown(promise: nil)
        }
    }

    /// Each request through the router, as Hummingbird's application answers it: an error no
    /// route turned into an answer is a `500`; every answer has `Date` and `Server`.
    private static func responder(_ router: RouterResponder<ServerRequestContext>, logger: Logger) -> HTTPChannelHandler.Responder {
        let date = Locked(SecondDate())
        return { request, writer, channel in
            let context = ServerRequestContext(source: .init(channel: channel, logger: logger))
            var response: Response
            do {
                response = try await router.respond(to: request, context: context)
            } catch let error as HTTPParserError {
                throw error
            } catch {
                logger.debug("an error no route answered", metadata: ["error": "\(error)"])
                response = Response(status: .internalServerError)
            }
            response.headers[.date] = date.withLock { $0.now() }
            response.headers[.server] = ImageServer.serverName
            do {
                try await writer.write(response: response.head, body: response.body)
            } catch is HTTPParserError {
                // Rethrown, it would make the channel write a 400 after this answer: the connection closes instead.
                throw ChannelError.ioOnClosedChannel
            }
        }
    }
}
