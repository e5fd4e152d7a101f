import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import NIOCore

/// The service on Hummingbird: `/health`, `/metrics` (Prometheus), a route group per mounted
/// dialect (imgproxy's URLs under their path prefix, thumbor's under theirs), and `/gallery`.
/// Embed ``router(service:)`` in an application of your own; `imago serve` runs it on an
/// ``ImageListener``.
public enum ImageServer {
    /// A router answering `/health`, `/metrics`, `/gallery` and each mounted dialect's URLs
    /// through `service`.
    public static func router(service: ImageService) -> Router<ServerRequestContext> {
        let router = Router(context: ServerRequestContext.self)
        router.get("/health") { _, _ in "ok\n" }
        // Paths the operator names are registered once each (the router traps on a second
        // handler for a path); the settings allow only plain segments in them.
        var taken: Set<String> = ["/health", "/metrics", "/gallery"]
        func claim(_ path: String) -> Bool {
            let trimmed = path.count > 1 && path.hasSuffix("/") ? String(path.dropLast()) : path
            return taken.insert(trimmed).inserted
        }
        if let path = service.configuration.healthCheckPath, !path.isEmpty, claim(path) {
            router.get(RouterPath(path)) { _, _ in "ok\n" }
        }
        if let origin = service.configuration.allowOrigin {
            // A browser's preflight, answered as imgproxy answers it.
            router.on("**", method: .options) { _, _ in
                Response(status: .ok, headers: [.accessControlAllowOrigin: origin, .accessControlAllowMethods: "GET, OPTIONS"])
            }
        }
        if service.configuration.metricsAddress == nil { router.get("/metrics", use: metrics(service)) }
        // One route group per mounted dialect, the gallery's page, and the service's own 404 for
        // any other path.
        for mount in service.mounts {
            if mount.dialect == .thumbor {
                // thumbor's health check, under its mount, as thumbor answers it.
                let route = mount.prefix + service.configuration.thumborHealthcheckRoute
                let working: @Sendable (Request, ServerRequestContext) async throws -> Response = { _, _ in
                    Response(status: .ok, headers: [.cacheControl: "no-cache"], body: ResponseBody(byteBuffer: ByteBuffer(string: "WORKING")))
                }
                if claim(route) {
                    router.get(RouterPath(route), use: working)
                    router.head(RouterPath(route), use: working)
                }
            }
            let handler = answering(service, .dialect(mount))
            if mount.prefix.isEmpty {
                router.get("**", use: handler)
                router.head("**", use: handler)
            } else {
                router.get(RouterPath(mount.prefix), use: handler)
                router.head(RouterPath(mount.prefix), use: handler)
                let group = router.group(RouterPath(mount.prefix))
                group.get("**", use: handler)
                group.head("**", use: handler)
            }
        }
        if service.configuration.servesGallery {
            router.get("/gallery", use: answering(service, .gallery))
            router.head("/gallery", use: answering(service, .gallery))
        }
        if !service.mounts.contains(where: { $0.prefix.isEmpty }) {
            router.get("**", use: answering(service, .notFound))
            router.head("**", use: answering(service, .notFound))
        }
        return router
    }

    /// A router answering `/metrics` alone, for ``ServerConfiguration/metricsAddress``.
    public static func metricsRouter(service: ImageService) -> Router<BasicRequestContext> {
        let router = Router(context: BasicRequestContext.self)
        router.get("/metrics", use: metrics(service))
        return router
    }

    /// `/metrics`: the service's Prometheus exposition, its memory report made fresh.
    private static func metrics<Context: RequestContext>(_ service: ImageService) -> @Sendable (Request, Context) async throws -> Response {
        { _, _ in
            service.metrics.recordMemory(service.memoryReport)
            return Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4"],
                body: ResponseBody(byteBuffer: ByteBuffer(string: service.metrics.exposition())))
        }
    }

    /// A handler answering along `route`. A request that makes an image is cancelled when its
    /// connection closes, so that it leaves the work queue when it is still waiting there.
    private static func answering(_ service: ImageService, _ route: ServiceRoute) -> @Sendable (Request, ServerRequestContext) async throws -> Response {
        { request, context in
            let head = ServiceRequest(request.head)
            let answer =
                if let connection = context.connection, route.makesImages {
                    await connection.whileOpen { await service.respond(to: head, route: route) }
                } else {
                    await service.respond(to: head, route: route)
                }
            return Response(
                status: HTTPResponse.Status(code: answer.status), headers: answer.headerFields, body: ResponseBody(byteBuffer: answer.body))
        }
    }

    /// Mounts the image service on an application's own router: every `GET` and `HEAD` under
    /// `prefix` (`/images/{signature}/{options}/plain/{source}`) is an imgproxy URL answered by
    /// `service`, with the path after the prefix as the URL the signature covers. The service keeps
    /// its own settings and metrics (``ImageService/metrics``; expose them where the app likes).
    ///
    /// ```swift
    /// let router = Router()
    /// router.get("/") { _, _ in "my app" }
    /// ImageServer.mount(try ImageService(configuration: settings), on: router, at: "/images")
    /// ```
    public static func mount<Context: RequestContext>(_ service: ImageService, on router: Router<Context>, at prefix: String) {
        let trimmed = "/" + prefix.split(separator: "/").joined(separator: "/")
        let handler: @Sendable (Request, Context) async throws -> Response = { request, _ in
            var head = ServiceRequest(request.head)
            head.path = head.path.hasPrefix(trimmed) ? String(head.path.dropFirst(trimmed.count)) : head.path
            if head.path.isEmpty { head.path = "/" }
            let answer = await service.respond(to: head)
            return Response(
                status: HTTPResponse.Status(code: answer.status), headers: answer.headerFields, body: ResponseBody(byteBuffer: answer.body))
        }
        let group = router.group(RouterPath(trimmed))
        group.get("**", use: handler)
        group.head("**", use: handler)
    }

    /// The channel handlers each connection of ``ImageListener`` has after HTTP/1.1's: the
    /// connection deadlines of the service's configuration (the request head's, slowloris
    /// protection; the keep-alive's; the answer's write), variants kept in memory answered on the
    /// event loop, and each connection's close told to the requests it carries.
    static func connectionHandlers(_ service: ImageService) -> [any RemovableChannelHandler] {
        let configuration = service.configuration
        // TimeAmount(Duration) clamps, never traps.
        let timeouts = ConnectionTimeoutHandler.Timeouts(
            readRequest: TimeAmount(configuration.requestHeadTimeout), keepAlive: TimeAmount(configuration.keepAliveTimeout),
            writeResponse: TimeAmount(configuration.writeResponseTimeout))
        return [ConnectionTimeoutHandler(timeouts), ConnectionWatch.Handler(), KeptVariantHandler(service: service)]
    }

    static let requestIDField = HTTPField.Name("X-Request-Id")!

    /// The `Server` header of every answer.
    public static let serverName = "imago"
}
