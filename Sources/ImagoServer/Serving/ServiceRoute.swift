/// Where the service sends a request: a dialect mounted under its path prefix (the path under it
/// is what the dialect reads, and what a signature covers), the gallery, or nowhere (404).
/// ``ImageServer/router(service:)`` registers one Hummingbird route group per mount from
/// `ImageService.mounts` (made once, from the configuration); ``ImageService/respond(to:)`` finds the same route from the path.
enum ServiceRoute: Sendable, Equatable {
    case dialect(ServiceMount)
    case gallery
    case notFound

    /// Whether requests along it may make images (and so wait in the work queue).
    var makesImages: Bool {
        if case .dialect = self { true } else { false }
    }
}

/// A dialect answered under a path prefix (`""`: the root).
struct ServiceMount: Sendable, Equatable {
    var dialect: ServerConfiguration.Dialect
    var prefix: String

    /// Whether `path` is under this mount.
    func holds(_ path: String) -> Bool { prefix.isEmpty || path == prefix || path.hasPrefix(prefix + "/") }

    /// `path` under this mount: the prefix taken off, `/` for the mount itself.
    func path(under path: String) -> String {
        let rest = String(path.dropFirst(prefix.count))
        return rest.isEmpty ? "/" : rest
    }
}

extension ServiceMount {
    /// The dialects `configuration` mounts, the longest prefix first (the order a path is matched in).
    static func all(_ configuration: ServerConfiguration) -> [ServiceMount] {
        [(ServerConfiguration.Dialect.thumbor, configuration.thumborMount), (.imgproxy, configuration.imgproxyMount)]
            .compactMap { dialect, prefix in prefix.map { ServiceMount(dialect: dialect, prefix: $0) } }
            .sorted { $0.prefix.count > $1.prefix.count }
    }
}

extension ImageService {
    /// The route of `path`: the gallery when served, else the longest mount holding it.
    func route(_ path: String) -> ServiceRoute {
        if configuration.servesGallery, path == "/gallery" || path == "/gallery/" { return .gallery }
        return mounts.first { $0.holds(path) }.map(ServiceRoute.dialect) ?? .notFound
    }
}
