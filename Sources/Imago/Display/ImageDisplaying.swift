import Foundation

/// Anything that shows an image: an image view, a layer, a cell. Conformers keep one
/// ``ImageBinding`` (`let imageBinding = ImageBinding()`); it holds the target's current load and
/// cancels it when the target goes away.
///
/// `setImage(with:…)` gives a target `UIImageView+AFNetworking`'s semantics: a memory-cache hit
/// is shown before the call returns (no placeholder flash); otherwise the placeholder is shown
/// and the image when it arrives; asking again for the URL already loading does nothing; a new
/// URL cancels the previous load; a nil URL cancels and shows the placeholder; and a completion
/// from a load the target has moved on from is ignored.
@MainActor
public protocol ImageDisplaying: AnyObject, Sendable {
    /// Holds the target's load; conformers store one for their lifetime.
    var imageBinding: ImageBinding { get }
    /// Shows `image`, or nothing for nil.
    func display(_ image: Image?)
}

extension ImageDisplaying {
    /// Loads `url` into the target; see ``ImageDisplaying`` for the rules. `success` and
    /// `failure` are called on the main actor, at most one of them, and not at all for a load
    /// that was cancelled or replaced.
    public func setImage(
        with url: URL?,
        placeholder: Image? = nil,
        options: ImageRequest.Options = [],
        pipeline: ImagePipeline = .shared,
        success: (@MainActor (ImageResponse) -> Void)? = nil,
        failure: (@MainActor (ImagoError) -> Void)? = nil
    ) {
        setImage(with: url.map { ImageRequest(url: $0, options: options) }, placeholder: placeholder, pipeline: pipeline, success: success, failure: failure)
    }

    /// Loads `request` into the target (a thumbnail, processors, a priority…).
    public func setImage(
        with request: ImageRequest?,
        placeholder: Image? = nil,
        pipeline: ImagePipeline = .shared,
        success: (@MainActor (ImageResponse) -> Void)? = nil,
        failure: (@MainActor (ImagoError) -> Void)? = nil
    ) {
        let binding = imageBinding
        guard let request else {
            binding.cancel()
            display(placeholder)
            return
        }
        if binding.isLoading(request.cacheKey) { return }
        binding.cancel()
        if let cached = pipeline.cachedResponse(for: request) {
            display(cached.image)
            success?(cached)
            return
        }
        display(placeholder)
        let receipt = binding.begin(request.cacheKey)
        let task = pipeline.imageTask(
            with: request,
            completion: { [weak self] result in
                Task { @MainActor in
                    guard let self, self.imageBinding.finish(receipt) else { return }
                    switch result {
                    case .success(let response):
                        self.display(response.image)
                        success?(response)
                    case .failure(let error):
                        // Cancelled loads were replaced or stopped on purpose: nothing to say.
                        if !error.isCancelled { failure?(error) }
                    }
                }
            })
        binding.attach(task, receipt: receipt)
    }

    /// Loads `request` into the target, showing a placeholder made from a hash until the image
    /// arrives: ``ImagePlaceholder/stored`` paints the ThumbHash the pipeline recorded for the
    /// image (``ImagePipeline/storedPlaceholder(for:)``), so a list scrolled back to shows each
    /// image's colours at once. Otherwise as the `setImage(with:placeholder:)` that takes an `Image`.
    public func setImage(
        with request: ImageRequest?,
        placeholder: ImagePlaceholder,
        pipeline: ImagePipeline = .shared,
        success: (@MainActor (ImageResponse) -> Void)? = nil,
        failure: (@MainActor (ImagoError) -> Void)? = nil
    ) {
        let shown: Image?
        switch placeholder {
        case .image(let image): shown = image
        case .thumbHash(let hash): shown = hash.render()
        case .blurHash(let hash): shown = try? hash.render(width: ImagePlaceholder.blurHashSide, height: ImagePlaceholder.blurHashSide)
        case .stored:
            // A memory hit shows the image at once: no index read for it.
            shown = request.flatMap { pipeline.cachedResponse(for: $0) == nil ? pipeline.storedPlaceholder(for: $0)?.render() : nil }
        }
        setImage(with: request, placeholder: shown, pipeline: pipeline, success: success, failure: failure)
    }

    /// Cancels the target's load, if any; what it shows stays.
    public func cancelImageLoad() {
        imageBinding.cancel()
    }
}

/// What a display target shows while its image loads.
public enum ImagePlaceholder: Sendable {
    /// This image.
    case image(Image)
    /// This ThumbHash, rendered at its reference size (32 pixels on the long side); the view scales it.
    case thumbHash(ThumbHash)
    /// This BlurHash, rendered at ``blurHashSide`` pixels square.
    case blurHash(BlurHash)
    /// The ThumbHash the pipeline recorded beside the image's original in its disk cache, when
    /// ``ImagePipeline/placeholder(for:)`` made one before; nothing otherwise.
    case stored

    /// The side a BlurHash placeholder is rendered at.
    public static let blurHashSide = 32
}
