import Foundation

/// Choosing among a request's sources (React Native's `imageSourceForSize`).
extension ImagePipeline {
    /// `request` loading the source that suits it: the smallest that covers its thumbnail without
    /// upscaling, preferring one whose variant is already in the memory cache; the largest when
    /// none covers it or there is no thumbnail.
    func selectingSource(_ request: ImageRequest) -> ImageRequest {
        guard request.sources.count > 1 else { return request }
        let byArea = request.sources.sorted { $0.pixelSize.width * $0.pixelSize.height < $1.pixelSize.width * $1.pixelSize.height }
        var chosen = byArea.last!
        if let thumbnail = request.thumbnail {
            let resize = thumbnail.resize
            var upscaling = resize
            upscaling.upscale = true
            let covering = byArea.filter { source in
                resize.scaledSize(width: source.pixelSize.width, height: source.pixelSize.height)
                    == upscaling.scaledSize(width: source.pixelSize.width, height: source.pixelSize.height)
            }
            let cached = covering.first { source in
                var candidate = request
                candidate.url = source.url
                return configuration.memoryCache?.value(forKey: candidate.cacheKey) != nil
            }
            chosen = cached ?? covering.first ?? chosen
        }
        var selected = request
        selected.url = chosen.url
        return selected
    }
}
