import Foundation

/// The loaders a pipeline can use, and which one loads a URL (React Native's `RCTImageURLLoader`
/// registry): among those that answer `canLoad`, the highest `loaderPriority` wins, and among equal
/// priorities the most recently registered.
public final class LoaderRegistry: Sendable {
    private let loaders: Locked<[any DataLoading]>

    /// Makes a registry holding `loaders`, later ones winning ties.
    public init(_ loaders: [any DataLoading] = []) {
        self.loaders = Locked(loaders)
    }

    /// The built-in loaders: `file://`, `data:` and http(s) on ``HTTPDataLoader`` (the
    /// `HTTPClientLoader` trait), or on URLSession when only the `URLSessionLoader` trait is on.
    /// With neither, http(s) URLs fail with `noLoader` unless you register a loader.
    /// ``HTTPDataLoader`` closes a connection left unused for `connectionIdleTimeout`.
    public static func standard(connectionIdleTimeout: Duration = .seconds(60)) -> LoaderRegistry {
        var loaders: [any DataLoading] = [FileDataLoader(), DataURLLoader()]
        #if HTTPClientLoader
            loaders.append(HTTPDataLoader(connectionIdleTimeout: connectionIdleTimeout))
        #elseif URLSessionLoader
            loaders.append(URLSessionDataLoader())
        #endif
        return LoaderRegistry(loaders)
    }

    /// Adds a loader; it wins ties with every loader registered before it.
    public func register(_ loader: any DataLoading) {
        loaders.withLock { $0.append(loader) }
    }

    /// Connections the loaders keep open between transfers, all together.
    public var keptConnectionCount: Int {
        loaders.withLock { $0.reduce(0) { $0 + $1.keptConnectionCount } }
    }

    /// The loader that will load `url`, or nil when none can.
    public func loader(for url: URL) -> (any DataLoading)? {
        loaders.withLock { loaders in
            var best: (any DataLoading)?
            for loader in loaders.reversed() where loader.canLoad(url) {
                if let current = best, loader.loaderPriority <= current.loaderPriority { continue }
                best = loader
            }
            return best
        }
    }
}
