import Foundation

/// What a URL says of its answer beyond the picture: when it expires (`expires`), the
/// `Content-Disposition` imgproxy sends with every image (`filename`, `return_attachment`), and
/// a `Cache-Control` of its own (thumbor's `max_age`).
struct DeliveryHeaders: Sendable {
    /// The unix time after which the URL answers 404.
    var expires: Int?
    /// The file name without its extension, made safe for the header.
    var name: String
    var attachment: Bool
    /// The extension, when it is not the answer's format's (raw and skipped sources).
    var fileExtension: String?
    /// Whether `Content-Disposition` is sent (imgproxy sends it; thumbor does not).
    var sendsDisposition = true
    /// The answer's own `Cache-Control`, in place of the server's; an empty one sends none.
    var cacheControl: String?
    /// `Link: <source>; rel="canonical"` (imgproxy's `IMGPROXY_SET_CANONICAL_HEADER`): the
    /// http(s) source's URL, its user and password left out.
    var canonicalLink: String?
    /// Whether the answer carries its ETag and answers `If-None-Match` (imgproxy's
    /// `IMGPROXY_USE_ETAG`; Imago's default is on).
    var sendsETag = true
    /// Whether the answer carries imgproxy's `X-Origin-*` and `X-Result-*` debug headers
    /// (`IMGPROXY_ENABLE_DEBUG_HEADERS`), when the variant was made by this process.
    var sendsDebugHeaders = false
    /// Whether the answer varies with the client hints (imgproxy's `Vary` names them).
    var variesWithClientHints = false
    /// Whether the answer carries the source's `Last-Modified` (no older than the buster) and
    /// answers `If-Modified-Since` (imgproxy's `IMGPROXY_USE_LAST_MODIFIED`).
    var sendsLastModified = false
    var lastModifiedBuster: Date?
    /// Whether the source's `Cache-Control`, else its `Expires`, replaces the server's
    /// (`IMGPROXY_CACHE_CONTROL_PASSTHROUGH`); the URL's own still wins.
    var passesSourceCacheControl = false

    init(options: ProcessingOptions, source: URL, returnsAttachment: Bool) {
        expires = options.delivery.expires
        attachment = options.delivery.returnsAttachment ?? returnsAttachment
        let fromSource = source.deletingPathExtension().lastPathComponent
        name = Self.safe(options.delivery.filename ?? (fromSource.isEmpty || fromSource == "/" ? "image" : fromSource))
    }

    /// thumbor's answers: no `Content-Disposition`, and `max-age=N,public` when a `max_age` filter
    /// gives one (none for 0).
    init(thumborMaxAge maxAge: Int?) {
        name = "image"
        attachment = false
        sendsDisposition = false
        cacheControl = maxAge.map { $0 > 0 ? "max-age=\($0),public" : "" }
    }

    /// Answers that are facts, not files (`/info` JSON): no `Content-Disposition`, the server's
    /// `Cache-Control`.
    static let facts = DeliveryHeaders(thumborMaxAge: nil)

    /// The `Link` header naming `source` as the canonical URL, nil when it is not http(s).
    static func canonicalLink(to source: URL) -> String? {
        guard ["http", "https"].contains(source.scheme?.lowercased() ?? ""), var parts = URLComponents(url: source, resolvingAgainstBaseURL: false)
        else { return nil }
        (parts.user, parts.password) = (nil, nil)
        guard let text = parts.url?.absoluteString, !text.contains(where: { $0 == "\r" || $0 == "\n" || $0 == ">" }) else { return nil }
        return "<" + text + ">; rel=\"canonical\""
    }

    func hasExpired(now: Int = Int(Date().timeIntervalSince1970)) -> Bool {
        guard let expires else { return false }
        return expires < now
    }

    func with(extension text: String?) -> DeliveryHeaders {
        var copy = self
        copy.fileExtension = text
        return copy
    }

    /// `inline; filename="name.jpg"` or `attachment; …`.
    func contentDisposition(defaultExtension: String) -> String? {
        guard sendsDisposition else { return nil }
        let file = fileExtension.map { name + "." + $0 } ?? name + "." + defaultExtension
        return (attachment ? "attachment" : "inline") + "; filename=\"" + file + "\""
    }

    /// A name that cannot break the header or name a path: printable ASCII without quotes,
    /// backslashes, slashes or control characters (others become `_`), at most 200 bytes.
    static func safe(_ name: String) -> String {
        let cleaned = String(
            String.UnicodeScalarView(
                name.unicodeScalars.prefix(200).map { scalar -> Unicode.Scalar in
                    let value = scalar.value
                    let plain = value >= 0x20 && value < 0x7F && scalar != "\"" && scalar != "\\" && scalar != "/" && scalar != ";"
                    return plain ? scalar : "_"
                }))
        let trimmed = cleaned.trimmingCharacters(in: CharacterSet(charactersIn: ". "))
        return trimmed.isEmpty ? "image" : trimmed
    }
}
