import Foundation

extension TestOrigin {
    /// How the origin answers one path. Every control can also be set per request with a query
    /// parameter (see ``applying(query:)``), so one route serves many behaviours.
    public struct Route: Sendable {
        /// What the `Content-Type` header says.
        public enum ContentType: Sendable, Hashable {
            /// From the path's extension.
            case automatic
            /// No Content-Type header at all.
            case none
            /// This value, right or wrong.
            case value(String)
        }

        /// The body (for redirects and errors too, if set).
        public var body: Data
        /// The status of a normal answer.
        public var status = 200
        public var contentType = ContentType.automatic
        /// Extra headers, for example `Cache-Control` or `Expires`.
        public var headers: [(name: String, value: String)] = []
        /// Time before the response head is sent.
        public var latency: Duration?
        /// Send the body at most this many bytes per second (a tenth every 100 ms).
        public var bytesPerSecond: Int?
        /// Send the body with chunked transfer encoding.
        public var chunked = false
        /// An ETag; `If-None-Match` with it is answered 304.
        public var etag: String?
        /// A Last-Modified date; `If-Modified-Since` at or after it is answered 304.
        public var lastModified: Date?
        /// Basic-auth user and password required; without them the answer is 401.
        public var basicAuth: (user: String, password: String)?
        /// Answer 302 to this location (absolute, or a path on this origin).
        public var redirect: String?
        /// Answer this many 302 hops (to the same path) before serving.
        public var redirectHops = 0
        /// Answer an endless loop of 302s between two URLs.
        public var redirectLoop = false
        /// Announce this Content-Length whatever the body is, then close after the body.
        public var declaredLength: Int?
        /// Send this many body bytes (with the full Content-Length), then close.
        public var truncateAfter: Int?
        /// Send this many body bytes, then reset the connection (RST).
        public var resetAfter: Int?
        /// When above 0, `truncateAfter` and `resetAfter` cut only the first this many requests to
        /// the path (since the log was cleared); later ones get the whole body.
        public var cutFirst = 0
        /// Hold the response until ``TestOrigin/release(_:)`` opens the gate of this name.
        public var gate: String?
        /// Answer `Range: bytes=a-b` with 206 and the slice, unless `If-Range` names another
        /// version than the route's ETag (strong comparison) or Last-Modified date (exact).
        public var acceptsRanges = true
        /// Once a response has been sent, the route's ETag becomes this: an object replaced while a
        /// client reads it by ranges.
        public var etagAfterFirstResponse: String?
        /// Sends this many body bytes, then holds the rest until the gate is released.
        public var pauseAfter: (bytes: Int, gate: String)?
        /// The first this many requests to the path (since the log was cleared) get `failureStatus`
        /// with `failureHeaders` and a short body, the later ones the route.
        public var failFirst = 0
        public var failureStatus = 503
        public var failureHeaders: [(name: String, value: String)] = []
        /// On a connection that has already carried a request, close without answering: what a
        /// server does when it times out an idle keep-alive connection just as a request arrives.
        public var closeIfReused = false

        /// A route serving `body`.
        public init(body: Data) {
            self.body = body
        }

        /// This route with per-request controls from a query string:
        /// `status=N`, `latency_ms=N`, `rate=N` (bytes/s), `chunked=1`, `content_type=none|TYPE`,
        /// `length=N` (declared), `truncate=N`, `reset=N`, `redirects=N` (hops left), `loop=1|2`,
        /// `etag=TAG`, `cache_control=VALUE`, `gate=NAME`, `fail_first=N`, `fail_status=N`, `retry_after=VALUE`,
        /// `pause_after=N&pause_gate=NAME`, `close_if_reused=1`, `cut_first=N`.
        public func applying(query: [String: String]) -> Route {
            var route = self
            if let value = query["status"].flatMap(Int.init) { route.status = value }
            if let value = query["latency_ms"].flatMap(Int.init) { route.latency = .milliseconds(value) }
            if let value = query["rate"].flatMap(Int.init) { route.bytesPerSecond = value }
            if query["chunked"] == "1" { route.chunked = true }
            if let value = query["content_type"] { route.contentType = value == "none" ? .none : .value(value) }
            if let value = query["length"].flatMap(Int.init) { route.declaredLength = value }
            if let value = query["truncate"].flatMap(Int.init) { route.truncateAfter = value }
            if let value = query["reset"].flatMap(Int.init) { route.resetAfter = value }
            if let value = query["redirects"].flatMap(Int.init) { route.redirectHops = value }
            if query["loop"] != nil { route.redirectLoop = true }
            if let value = query["etag"] { route.etag = value }
            if let value = query["cache_control"] { route.headers.append(("Cache-Control", value)) }
            if let value = query["gate"] { route.gate = value }
            if let value = query["fail_first"].flatMap(Int.init) { route.failFirst = value }
            if let value = query["fail_status"].flatMap(Int.init) { route.failureStatus = value }
            if let value = query["retry_after"] { route.failureHeaders.append(("Retry-After", value)) }
            if let bytes = query["pause_after"].flatMap(Int.init), let gate = query["pause_gate"] { route.pauseAfter = (bytes, gate) }
            if query["close_if_reused"] == "1" { route.closeIfReused = true }
            if let value = query["cut_first"].flatMap(Int.init) { route.cutFirst = value }
            return route
        }
    }
}
