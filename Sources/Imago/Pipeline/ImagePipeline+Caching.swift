import Foundation

/// How a transfer gets its bytes: the disk cache when its entry may be served, else the loader,
/// with a conditional request when a stale entry has validators; and what is written back.
extension ImagePipeline {
    /// A transfer's bytes and where they came from.
    struct Loaded: Sendable {
        var response: DataResponse
        var data: Data
        var source: ImageResponse.Source
        /// False for `Cache-Control: no-store`: no cache may keep it.
        var isStorable: Bool
        /// What a disk entry of these bytes (or of a variant made from them) says of freshness.
        var metadata: DiskCache.Metadata?
        /// Where these bytes are (or are to be) kept on disk, and what is to be written once
        /// they have validated: nothing is written before, so bytes that crash or fail a decoder
        /// are never replayed from disk.
        var disk: DiskSlot?
    }

    /// A transfer's place in the disk cache and the write that waits for its bytes to validate.
    struct DiskSlot: Sendable {
        enum Write: Sendable {
            /// New bytes from a 200 response.
            case store(DiskCache.Metadata)
            /// A 304's headers for the stored bytes.
            case refresh(DiskCache.Metadata)
        }
        var cache: DiskCache
        var key: String
        var write: Write?
    }

    /// Settles `loaded`'s disk entry once its bytes are judged: `valid` bytes are written (or their
    /// entry refreshed); invalid ones are not, and an entry holding them is removed, so an entry
    /// known to fail is never served again.
    func settleDisk(_ loaded: Loaded, valid: Bool) {
        guard let slot = loaded.disk else { return }
        guard valid else {
            if loaded.source != .network || slot.write != nil { slot.cache.remove(slot.key) }
            return
        }
        switch slot.write {
        case .store(let metadata): slot.cache.store(loaded.data, for: slot.key, metadata: metadata)
        case .refresh(let metadata): slot.cache.refresh(metadata, for: slot.key)
        case nil: break
        }
    }

    /// Whether bytes fetched for a request that wants no image may be kept: they must sniff as a
    /// format a registered decoder claims (an HTML error page or a gzip body does not).
    func sniffsAsImage(_ data: Data) -> Bool {
        decoders.decoder(for: data) != nil
    }

    /// Loads `request`'s bytes through the disk cache and the loader. `contacted` becomes true
    /// once a loader is asked, so the caller reports a transfer only when one was made.
    func load(_ request: ImageRequest, sink: DataSink, start: ContinuousClock.Instant, contacted: inout Bool) async throws -> Loaded {
        let disk = diskCache(for: request)
        let key = request.diskCacheKey
        let readsDisk = request.cachePolicy != .reloadIgnoringCache && !request.options.contains(.disableDiskCacheReads)
        let writesDisk = !request.options.contains(.disableDiskCacheWrites)
        let cached = readsDisk ? disk?.entry(for: key) : nil

        if let cached, Self.servesWithoutRequest(cached, policy: request.cachePolicy, now: Date()) {
            let headers = cached.metadata.contentType.map { [(name: "Content-Type", value: $0)] } ?? []
            return Loaded(
                response: DataResponse(url: request.url, statusCode: 200, headers: headers, expectedContentLength: Int64(cached.data.count)),
                data: cached.data, source: .disk, isStorable: true, metadata: cached.metadata,
                disk: disk.map { DiskSlot(cache: $0, key: key) }
            )
        }
        if request.cachePolicy == .returnCacheDataDontLoad {
            throw ImagoError(.notCached, url: request.url, stage: .caching)
        }
        guard let loader = loaders.loader(for: request.url) else {
            throw ImagoError(.noLoader, url: request.url)
        }
        let validators = cached?.metadata.freshness.validationHeaders ?? []
        var conditional = loadRequest(for: request)
        conditional.headers += validators
        let loadRequest = conditional
        contacted = true
        transferStarted(request.url)
        let receivedAt = Date()
        do {
            if let limit = request.deadline ?? configuration.deadline {
                try await Self.withDeadline(start + limit, url: request.url) {
                    try await loader.load(loadRequest, into: sink)
                }
            } else {
                try await loader.load(loadRequest, into: sink)
            }
            try Task.checkCancellation()
            let (response, data) = try sink.finish()
            let freshness = HTTPFreshness(headers: response.headers, receivedAt: receivedAt, heuristicLifetime: configuration.heuristicFreshness)
            let metadata = DiskCache.Metadata(contentType: response.header("Content-Type"), receivedAt: receivedAt, freshness: freshness)
            var slot: DiskSlot?
            if let disk, writesDisk {
                if freshness.isStorable && response.statusCode == 200 {
                    slot = DiskSlot(cache: disk, key: key, write: .store(metadata))
                } else if !freshness.isStorable {
                    disk.remove(key)
                }
            }
            return Loaded(response: response, data: data, source: .network, isStorable: freshness.isStorable, metadata: metadata, disk: slot)
        } catch let error as ImagoError where error.code == .notModified {
            // A 304 is an answer only to our conditional request; otherwise it stays an error.
            guard let cached, !validators.isEmpty else { throw error }
            let head = sink.response ?? DataResponse(url: request.url, statusCode: 304)
            // The 304's headers update the stored ones (RFC 9111 §4.3.4); validators it omits are kept.
            var headers = head.headers
            if head.header("ETag") == nil, let etag = cached.metadata.freshness.etag { headers.append(("ETag", etag)) }
            if head.header("Last-Modified") == nil, let modified = cached.metadata.freshness.lastModified { headers.append(("Last-Modified", modified)) }
            let freshness = HTTPFreshness(headers: headers, receivedAt: receivedAt, heuristicLifetime: configuration.heuristicFreshness)
            let metadata = DiskCache.Metadata(contentType: cached.metadata.contentType, receivedAt: receivedAt, freshness: freshness)
            var slot = disk.map { DiskSlot(cache: $0, key: key) }
            if let disk, writesDisk {
                if freshness.isStorable {
                    slot?.write = .refresh(metadata)
                } else {
                    disk.remove(key)
                }
            }
            return Loaded(
                response: DataResponse(url: head.url, statusCode: 304, headers: head.headers, expectedContentLength: Int64(cached.data.count)),
                data: cached.data, source: .revalidated, isStorable: freshness.isStorable, metadata: metadata, disk: slot
            )
        }
    }

    /// The disk cache for `request`: only `http(s)` responses are kept.
    func diskCache(for request: ImageRequest) -> DiskCache? {
        guard let scheme = request.url.scheme?.lowercased(), scheme == "http" || scheme == "https" else { return nil }
        return configuration.diskCache
    }

    /// Whether a disk entry answers the request with no request to the origin.
    static func servesWithoutRequest(_ entry: DiskCache.Entry, policy: ImageRequest.CachePolicy, now: Date) -> Bool {
        let fresh = entry.metadata.isFresh(at: now)
        switch policy {
        case .returnCacheDataDontLoad: return true
        case .refreshCached: return fresh && entry.metadata.freshness.isImmutable
        case .useProtocolCachePolicy: return fresh
        case .reloadIgnoringCache: return false
        }
    }

    /// Whether a request may be answered from the memory cache.
    static func readsMemory(_ request: ImageRequest) -> Bool {
        !request.options.contains(.disableMemoryCacheReads)
            && request.cachePolicy != .refreshCached && request.cachePolicy != .reloadIgnoringCache
    }
}
