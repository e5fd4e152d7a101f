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

    /// Cancels the target's load, if any; what it shows stays.
    public func cancelImageLoad() {
        imageBinding.cancel()
    }
}
