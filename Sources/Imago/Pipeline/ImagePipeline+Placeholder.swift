import Foundation

/// Placeholders of requested images: a ThumbHash made once per original and kept in the disk
/// cache's index beside it, so later asks cost one index lookup.
extension ImagePipeline {
    /// The ThumbHash of the image `request` names (its original: processors and thumbnail aside).
    /// Read from the disk cache's index when an earlier call recorded it beside the cached original
    /// (no payload read, no decode); else made from a decode that fits 100 pixels (a JPEG at 1/8,
    /// joining a transfer already under way for the URL), and recorded when the original is in
    /// the disk cache. Throws what loading the image throws.
    public func placeholder(for request: ImageRequest) async throws(ImagoError) -> ThumbHash {
        if let stored = storedPlaceholder(for: request) { return stored }
        var small = request
        small.processors = []
        small.thumbnail = ImageRequest.Thumbnail(maxPixelSize: Placeholders.sourceSide)
        let hash = try ThumbHash(image: try await image(for: small))
        configuration.diskCache?.storePlaceholder(Data(hash.bytes), for: request.diskCacheKey)
        return hash
    }

    /// The ThumbHash recorded for `request`'s original by ``placeholder(for:)``, from the disk
    /// cache's index alone; nil without a disk cache or a valid recorded one. Cheap enough to call
    /// before showing a load (one indexed SQLite read, no file read).
    public func storedPlaceholder(for request: ImageRequest) -> ThumbHash? {
        guard let disk = configuration.diskCache, let bytes = disk.placeholder(for: request.diskCacheKey) else { return nil }
        return ThumbHash(bytes: [UInt8](bytes))
    }
}
