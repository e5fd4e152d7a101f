import Foundation
import Imago

extension ServerSettings {
    /// Where and how the server listens, who may ask, and its limits on sources and work.
    static let listenAndLimits: [ServerSetting] = [
        .text(
            "--listen", "IMAGO_LISTEN",
            peers: [.same("IMGPROXY_BIND")], "address and port to listen on, or a socket's path with --network unix (default 127.0.0.1:8080)"
        ) { _, _ in },
        ServerSetting(
            "--network", "IMAGO_NETWORK", peers: [.same("IMGPROXY_NETWORK")],
            "tcp (default), tcp4 or tcp6 (where an address without a host listens: 0.0.0.0 or ::), or unix (--listen is a socket's path)"
        ) { configuration, text, _ throws(ServerError) in
            guard let network = ServerConfiguration.Network(rawValue: text.lowercased()) else { throw ServerSetting.invalid("--network", "IMAGO_NETWORK") }
            configuration.network = network
        },
        .boolean(
            "--so-reuseport", "IMAGO_SO_REUSEPORT", peers: [.boolean("IMGPROXY_SO_REUSEPORT")],
            "listen with SO_REUSEPORT, so that several processes on one host share the port and the kernel spreads connections over them",
            \.reusesPort),
        ServerSetting("--dialect", "IMAGO_DIALECT", "URLs answered at the root: imgproxy (default) or thumbor") { configuration, text, _ throws(ServerError) in
            guard let dialect = ServerConfiguration.Dialect(rawValue: text.lowercased()) else {
                throw ServerSetting.invalid("--dialect", "IMAGO_DIALECT")
            }
            configuration.dialect = dialect
        },
        .text(
            "--secret", "IMAGO_SECRET", peers: [.same("IMGPROXY_SECRET")],
            "image requests must carry Authorization: Bearer and this secret (others are 403); default none"
        ) { $0.secret = $1 },
        .text(
            "--allow-origin", "IMAGO_ALLOW_ORIGIN", peers: [.same("IMGPROXY_ALLOW_ORIGIN"), .thumborOrNone("ACCESS_CONTROL_ALLOW_ORIGIN_HEADER")],
            "Access-Control-Allow-Origin of image answers, OPTIONS answered (default none)"
        ) { $0.allowOrigin = $1.isEmpty ? nil : $1 },
        .integer(
            "--max-source-bytes", "IMAGO_MAX_SOURCE_BYTES", 1...(1 << 40),
            peers: [PeerVariable("IMGPROXY_MAX_SRC_FILE_SIZE") { text, _ in text == "0" ? String(1 << 40) : text }],
            "largest source in bytes (default 50000000)"
        ) {
            $0.limits.maxSourceBytes = Int64($1)
        },
        .integer(
            "--max-source-pixels", "IMAGO_MAX_SOURCE_PIXELS", 1...1_000_000_000,
            peers: [.megapixels("IMGPROXY_MAX_SRC_RESOLUTION"), .thumborWholeNumber("MAX_PIXELS")],
            "most pixels a source may declare", \.limits.maxSourcePixels),
        .integer(
            "--max-frames", "IMAGO_MAX_FRAMES", 1...100_000, peers: [.same("IMGPROXY_MAX_ANIMATION_FRAMES")], "most frames of an animated source",
            \.limits.maxFrames),
        .integer(
            "--max-frame-pixels", "IMAGO_MAX_FRAME_PIXELS", 0...1_000_000_000, peers: [.megapixels("IMGPROXY_MAX_ANIMATION_FRAME_RESOLUTION")],
            "most pixels a frame of an animated source may have (others are 422), 0 for no limit but --max-source-pixels", \.limits.maxFramePixels),
        .seconds(
            "--source-timeout", "IMAGO_SOURCE_TIMEOUT", peers: [.same("IMGPROXY_DOWNLOAD_TIMEOUT"), .thumborSeconds("HTTP_LOADER_REQUEST_TIMEOUT")],
            "seconds a source may take", \.sourceTimeout),
        .seconds(
            "--timeout", "IMAGO_TIMEOUT", peers: [.same("IMGPROXY_TIMEOUT")], "seconds a new image may take in all, source included, before a 504",
            \.workTimeout),
        .integer(
            "--workers", "IMAGO_WORKERS", 1...100_000, peers: [.same("IMGPROXY_WORKERS")],
            "images made at once; more wait in the queue (default 4 per core)"
        ) {
            $0.workers = $1
        },
        .integer(
            "--requests-queue-size", "IMAGO_REQUESTS_QUEUE_SIZE", 0...1_000_000,
            peers: [PeerVariable("IMGPROXY_REQUESTS_QUEUE_SIZE") { text, _ in text == "0" ? "1000000" : text }],
            "requests waiting for a worker; more are answered 429 at once (default 16 per worker; 0: none wait)"
        ) {
            $0.requestsQueueSize = $1
        },
        .integer(
            "--max-clients", "IMAGO_MAX_CLIENTS", 0...1_000_000, peers: [.same("IMGPROXY_MAX_CLIENTS")],
            "connections open at once; more wait to be accepted (default 2048; 0: no limit)"
        ) {
            $0.maxClients = $1
        },
        .seconds(
            "--request-head-timeout", "IMAGO_REQUEST_HEAD_TIMEOUT", peers: [.same("IMGPROXY_READ_REQUEST_TIMEOUT")],
            "seconds a client may take to send a request's head before its connection is closed (a GET has no body to read)", \.requestHeadTimeout),
        .integer(
            "--keep-alive-timeout", "IMAGO_KEEP_ALIVE_TIMEOUT", 0...3600, peers: [.same("IMGPROXY_KEEP_ALIVE_TIMEOUT")],
            "seconds a kept-alive connection may wait for its next request head; 0: one request per connection (default 10)"
        ) { $0.keepAliveTimeout = .seconds($1) },
        .seconds(
            "--write-response-timeout", "IMAGO_WRITE_RESPONSE_TIMEOUT", peers: [.same("IMGPROXY_WRITE_RESPONSE_TIMEOUT")],
            "seconds an answer may take to be written to a client that reads slowly before its connection is closed", \.writeResponseTimeout),
        .seconds(
            "--source-keep-alive-timeout", "IMAGO_SOURCE_KEEP_ALIVE_TIMEOUT", peers: [.same("IMGPROXY_CLIENT_KEEP_ALIVE_TIMEOUT")],
            "seconds a connection to a source's server is kept open unused", \.sourceKeepAliveTimeout),
        .integer(
            "--graceful-stop-timeout", "IMAGO_GRACEFUL_STOP_TIMEOUT", 0...3600, peers: [.same("IMGPROXY_GRACEFUL_STOP_TIMEOUT")],
            "seconds the requests in flight may take to finish after SIGTERM before they are cut off and the server exits 0 (default 20)"
        ) { $0.gracefulStopTimeout = .seconds($1) },
    ]
}
