import Foundation

/// Processed variants kept encoded in the disk cache (``ImageRequest/Options/storesVariantOnDisk``):
/// looked for before a request joins or starts a transfer, written after the variant is made.
extension ImagePipeline {
    /// The disk cache to look for `request`'s variant in, or nil when it should not be looked for.
    func variantDiskCache(for request: ImageRequest) -> DiskCache? {
        guard request.options.contains(.storesVariantOnDisk), request.hasVariant,
              request.cachePolicy != .reloadIgnoringCache, !request.options.contains(.disableDiskCacheReads) else { return nil }
        return diskCache(for: request)
    }

    /// `request`'s variant from disk, decoded and put in the memory cache, when one is stored and
    /// may be served under the request's cache policy (freshness is the original's).
    func diskVariant(for request: ImageRequest, in disk: DiskCache) -> ImageResponse? {
        guard let entry = disk.entry(for: request.variantDiskKey),
              Self.servesWithoutRequest(entry, policy: request.cachePolicy, now: Date()) else { return nil }
        guard let image = try? decoders.decode(entry.data, options: configuration.decodingOptions) else {
            // Never serve an entry known to fail: the variant is made again from the original.
            disk.remove(request.variantDiskKey)
            return nil
        }
        let headers = entry.metadata.contentType.map { [(name: "Content-Type", value: $0)] } ?? []
        let response = ImageResponse(request: request, data: entry.data, image: image, url: request.url, statusCode: 200, headers: headers, source: .disk)
        remember(response)
        return response
    }

    /// Writes `image`, made for `request` from `loaded`, to the disk cache as an encoded variant
    /// with the original's freshness, when the request asks and the response may be stored.
    /// Animated variants are not kept.
    func storeVariant(_ image: Image, for request: ImageRequest, loaded: Loaded) {
        guard request.options.contains(.storesVariantOnDisk), request.hasVariant, loaded.isStorable,
              !request.options.contains(.disableDiskCacheWrites), !image.isAnimated,
              var metadata = loaded.metadata, let disk = diskCache(for: request) else { return }
        let encoded: Data
        do {
            encoded = image.metadata.hasAlpha ? try PNGEncoder().encode(image) : try JPEGEncoder(quality: 90).encode(image)
        } catch {
            configuration.logger.warning("could not encode the variant of \(request.url) for the disk cache: \(error)")
            return
        }
        metadata.contentType = image.metadata.hasAlpha ? "image/png" : "image/jpeg"
        disk.store(encoded, for: request.variantDiskKey, metadata: metadata)
    }
}
