import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix

/// Answers the requests of one connection as the origin's routes say.
final class OriginHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let origin: TestOrigin
    private var connectionID = 0
    /// Requests this connection has carried, the current one included.
    private var requestsOnConnection = 0
    private var head: HTTPRequestHead?
    /// A response has started and not ended: a close now is the client's abort.
    private var isResponding = false
    /// A request has been read and its response has not ended (counted in the log's
    /// `unansweredRequests`).
    private var isAnswering = false
    /// The path of the request being answered, for the response log.
    private var currentPath = ""

    init(origin: TestOrigin) {
        self.origin = origin
    }

    func channelActive(context: ChannelHandlerContext) {
        origin.updateLog { log in
            log.connectionsAccepted += 1
            log.openConnections += 1
            connectionID = log.connectionsAccepted
        }
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        let aborted = isResponding
        isResponding = false
        let answering = isAnswering
        isAnswering = false
        origin.updateLog { log in
            log.openConnections -= 1
            if aborted { log.abortedResponses += 1 }
            if answering { log.unansweredRequests -= 1 }
        }
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head): self.head = head
        case .body: break
        case .end:
            guard let head else { return }
            self.head = nil
            handle(head, context: context)
        }
    }

    private func handle(_ head: HTTPRequestHead, context: ChannelHandlerContext) {
        let components = URLComponents(string: head.uri)
        let path = components?.percentEncodedPath ?? head.uri
        var query: [String: String] = [:]
        for item in components?.queryItems ?? [] { query[item.name] = item.value ?? "" }
        let request = RecordedRequest(
            method: "\(head.method)", path: path, query: query,
            headers: head.headers.map { ($0.name, $0.value) }, connectionID: connectionID
        )
        isAnswering = true
        origin.updateLog { log in
            log.requests.append(request)
            log.unansweredRequests += 1
        }
        requestsOnConnection += 1
        currentPath = path
        isResponding = true
        guard let route = origin.route(for: path)?.applying(query: query) else {
            send(status: .notFound, headers: [:], body: Data("no route for \(path)\n".utf8), context: context)
            return
        }
        if route.closeIfReused, requestsOnConnection > 1 {
            isResponding = false
            context.close(promise: nil)
            return
        }
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        let respond: @Sendable () -> Void = {
            bound.eventLoop.execute {
                let (handler, context) = bound.value
                guard context.channel.isActive else { return }
                if let latency = route.latency {
                    context.eventLoop.scheduleTask(
                        in: .nanoseconds(Int64(latency.components.seconds) * 1_000_000_000 + latency.components.attoseconds / 1_000_000_000)
                    ) {
                        let (handler, context) = bound.value
                        handler.respond(route, to: request, context: context)
                    }
                } else {
                    handler.respond(route, to: request, context: context)
                }
            }
        }
        if let gate = route.gate { origin.whenGateOpens(gate, respond) } else { respond() }
    }

    private func respond(_ route: TestOrigin.Route, to request: RecordedRequest, context: ChannelHandlerContext) {
        guard context.channel.isActive else { return }
        if let auth = route.basicAuth {
            let expected = "Basic " + Data("\(auth.user):\(auth.password)".utf8).base64EncodedString()
            guard request.header("authorization") == expected else {
                return send(status: .unauthorized, headers: ["WWW-Authenticate": "Basic realm=\"origin\""], body: Data("unauthorized\n".utf8), context: context)
            }
        }
        if route.redirectLoop {
            let next = request.query["loop"] == "1" ? "2" : "1"
            return redirect(to: request.path + "?loop=\(next)", context: context)
        }
        if route.redirectHops > 0 {
            var query = request.query
            query["redirects"] = String(route.redirectHops - 1)
            return redirect(to: request.path + "?" + query.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: "&"), context: context)
        }
        if let location = route.redirect { return redirect(to: location, context: context) }
        if route.failFirst > 0, origin.log.requests(to: request.path).count <= route.failFirst {
            let headers = Dictionary(route.failureHeaders.map { ($0.name, $0.value) }) { $1 }
            return send(status: HTTPResponseStatus(statusCode: route.failureStatus), headers: headers, body: Data("try again\n".utf8), context: context)
        }

        var headers: [String: String] = [:]
        if let etag = route.etag { headers["ETag"] = etag }
        if let lastModified = route.lastModified { headers["Last-Modified"] = Self.httpDate(lastModified) }
        for header in route.headers { headers[header.name] = header.value }
        if let etag = route.etag, let tags = request.header("if-none-match"),
            tags.split(separator: ",").contains(where: { $0.trimmingCharacters(in: .whitespaces) == etag || $0 == "*" })
        {
            return send(status: .notModified, headers: headers, body: Data(), context: context)
        }
        if route.etag == nil || request.header("if-none-match") == nil,
            let lastModified = route.lastModified, let since = request.header("if-modified-since").flatMap(Self.parseHTTPDate),
            floor(lastModified.timeIntervalSince1970) <= since.timeIntervalSince1970
        {
            return send(status: .notModified, headers: headers, body: Data(), context: context)
        }

        var status = HTTPResponseStatus(statusCode: route.status)
        var body = route.body
        if route.acceptsRanges { headers["Accept-Ranges"] = "bytes" }
        if route.acceptsRanges, route.status == 200, Self.ifRangeHolds(request.header("if-range"), route: route),
            let range = request.header("range").flatMap({ Self.byteRange($0, count: body.count) })
        {
            status = .partialContent
            headers["Content-Range"] = "bytes \(range.lowerBound)-\(range.upperBound - 1)/\(body.count)"
            body = body.subdata(in: range)
        }
        switch route.contentType {
        case .automatic: headers["Content-Type"] = Self.contentType(forPath: request.path)
        case .none: break
        case .value(let value): headers["Content-Type"] = value
        }
        let isChunked = route.chunked
        if !isChunked { headers["Content-Length"] = String(route.declaredLength ?? body.count) }

        var head = HTTPResponseHead(version: .http1_1, status: status)
        for (name, value) in headers { head.headers.add(name: name, value: value) }
        if isChunked { head.headers.add(name: "Transfer-Encoding", value: "chunked") }
        // How the body ends: cut and closed, reset, or complete.
        var sent = body
        var ending = Ending.complete
        let cuts = route.cutFirst == 0 || origin.log.requests(to: request.path).count <= route.cutFirst
        if cuts, let cut = route.resetAfter, cut < body.count {
            sent = body.prefix(cut)
            ending = .reset
        } else if cuts, let cut = route.truncateAfter, cut < body.count {
            sent = body.prefix(cut)
            ending = .close
        } else if let declared = route.declaredLength, declared != body.count {
            ending = .close
        }
        record(status: Int(status.code), bodyBytes: sent.count)
        if let next = route.etagAfterFirstResponse {
            origin.updateRoute(request.path) { route in
                route.etag = next
                route.etagAfterFirstResponse = nil
            }
        }
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        if let pause = route.pauseAfter, pause.bytes < sent.count {
            context.writeAndFlush(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: sent.prefix(pause.bytes))))), promise: nil)
            let rest = sent.dropFirst(pause.bytes)
            if route.closeIfReused, requestsOnConnection > 1 {
                isResponding = false
                context.close(promise: nil)
                return
            }
            let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            let ending = ending
            origin.whenGateOpens(pause.gate) {
                bound.eventLoop.execute {
                    let (handler, context) = bound.value
                    guard context.channel.isActive else { return }
                    context.write(handler.wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: rest)))), promise: nil)
                    handler.end(ending, context: context)
                }
            }
        } else if let rate = route.bytesPerSecond {
            sendThrottled(sent[...], chunk: max(1, rate / 10), ending: ending, context: context)
        } else if sent.count > Self.pacedPiece {
            sendPaced(sent[...], ending: ending, context: context)
        } else {
            if !sent.isEmpty {
                origin.updateLog { $0.bodyBytesWritten += sent.count }
                context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: sent)))), promise: nil)
            }
            end(ending, context: context)
        }
    }

    /// A large body goes out a piece at a time, each once the socket has taken the last, so that
    /// ``TestOrigin/Log/bodyBytesWritten`` counts what the client could have read, not what was queued.
    private static let pacedPiece = 64 << 10

    private func sendPaced(_ rest: Data.SubSequence, ending: Ending, context: ChannelHandlerContext) {
        guard context.channel.isActive else { return }
        guard !rest.isEmpty else { return end(ending, context: context) }
        let piece = rest.prefix(Self.pacedPiece)
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        context.writeAndFlush(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: piece))))).whenSuccess {
            bound.value.0.origin.updateLog { $0.bodyBytesWritten += piece.count }
            // Later, not from within the write's completion: no stack grows piece by piece.
            bound.eventLoop.execute {
                let (handler, context) = bound.value
                handler.sendPaced(rest.dropFirst(piece.count), ending: ending, context: context)
            }
        }
    }

    private enum Ending {
        case complete, close, reset
    }

    /// Sends one chunk every 100 ms, so `chunk` is a tenth of the rate.
    private func sendThrottled(_ rest: Data.SubSequence, chunk: Int, ending: Ending, context: ChannelHandlerContext) {
        guard context.channel.isActive else { return }
        guard !rest.isEmpty else { return end(ending, context: context) }
        let piece = rest.prefix(chunk)
        origin.updateLog { $0.bodyBytesWritten += piece.count }
        context.writeAndFlush(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: piece)))), promise: nil)
        let remainder = rest.dropFirst(chunk)
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        context.eventLoop.scheduleTask(in: .milliseconds(100)) {
            let (handler, context) = bound.value
            handler.sendThrottled(remainder, chunk: chunk, ending: ending, context: context)
        }
    }

    private func end(_ ending: Ending, context: ChannelHandlerContext) {
        if isAnswering {
            isAnswering = false
            origin.updateLog { $0.unansweredRequests -= 1 }
        }
        switch ending {
        case .complete:
            let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
            context.writeAndFlush(wrapOutboundOut(.end(nil))).whenSuccess {
                bound.value.isResponding = false
            }
        case .close:
            isResponding = false
            context.flush()
            context.close(promise: nil)
        case .reset:
            isResponding = false
            context.flush()
            // SO_LINGER with a zero timeout makes close() send RST instead of FIN.
            let channel = context.channel
            guard let socket = channel as? SocketOptionProvider else { return channel.close(promise: nil) }
            socket.setSoLinger(linger(l_onoff: 1, l_linger: 0)).whenComplete { _ in channel.close(promise: nil) }
        }
    }

    private func record(status: Int, bodyBytes: Int) {
        let response = RecordedResponse(path: currentPath, status: status, bodyBytes: bodyBytes)
        origin.updateLog { $0.responses.append(response) }
    }

    private func redirect(to location: String, context: ChannelHandlerContext) {
        send(status: .found, headers: ["Location": location], body: Data("redirect\n".utf8), context: context)
    }

    private func send(status: HTTPResponseStatus, headers: [String: String], body: Data, context: ChannelHandlerContext) {
        var head = HTTPResponseHead(version: .http1_1, status: status)
        for (name, value) in headers { head.headers.add(name: name, value: value) }
        if status != .notModified {
            head.headers.add(name: "Content-Length", value: String(body.count))
            head.headers.add(name: "Content-Type", value: "text/plain")
        }
        record(status: Int(status.code), bodyBytes: body.count)
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        if !body.isEmpty { context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: body)))), promise: nil) }
        end(.complete, context: context)
    }

    static func contentType(forPath path: String) -> String {
        switch (path as NSString).pathExtension.lowercased() {
        case "jpg", "jpeg": "image/jpeg"
        case "png": "image/png"
        case "webp": "image/webp"
        case "gif": "image/gif"
        default: "application/octet-stream"
        }
    }

    /// Whether a range request's `If-Range` (if any) names the route's current version: its
    /// strong ETag, or its Last-Modified date exactly (RFC 9110 §13.1.5).
    static func ifRangeHolds(_ ifRange: String?, route: TestOrigin.Route) -> Bool {
        guard let ifRange else { return true }
        if ifRange.hasPrefix("\"") { return route.etag.map { !$0.hasPrefix("W/") && $0 == ifRange } ?? false }
        return route.lastModified.map { httpDate($0) == ifRange } ?? false
    }

    /// `bytes=a-b`, `bytes=a-` or `bytes=-n`, as a range of `count` bytes; nil when unsatisfiable.
    static func byteRange(_ header: String, count: Int) -> Range<Int>? {
        guard header.hasPrefix("bytes="), !header.contains(",") else { return nil }
        let spec = header.dropFirst(6).split(separator: "-", omittingEmptySubsequences: false)
        guard spec.count == 2 else { return nil }
        let start = Int(spec[0]), end = Int(spec[1])
        switch (start, end) {
        case (let start?, let end?) where start <= end && start < count: return start..<min(end + 1, count)
        case (let start?, nil) where spec[1].isEmpty && start < count: return start..<count
        case (nil, let suffix?) where spec[0].isEmpty && suffix > 0: return max(0, count - suffix)..<count
        default: return nil
        }
    }

    private static func httpDateFormatter() -> DateFormatter {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter
    }

    static func httpDate(_ date: Date) -> String { httpDateFormatter().string(from: date) }
    static func parseHTTPDate(_ text: String) -> Date? { httpDateFormatter().date(from: text) }
}
