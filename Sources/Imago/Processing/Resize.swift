import Foundation

extension ImageProcessors {
    /// Scales an image to a target size (Lanczos3, premultiplied alpha).
    ///
    /// The content modes cover React Native's `resizeMode`: `aspectFit` is `contain`, `aspectFill`
    /// `cover` (cropped to the target when `crop` is set), `fill` `stretch`, and `center` keeps the
    /// image's size unless it is larger than the target, when it scales down to fit.
    public struct Resize: ImageProcessing, Hashable {
        /// How the image is fitted to the target size.
        public enum ContentMode: String, Sendable, Hashable, CaseIterable {
            /// The whole image inside the target, aspect kept (RN `contain`).
            case aspectFit
            /// The target covered, aspect kept (RN `cover`); see `crop`.
            case aspectFill
            /// Exactly the target size, aspect not kept (RN `stretch`).
            case fill
            /// Unscaled, unless larger than the target: then as `aspectFit` (RN `center`).
            case center
        }

        /// The target size in pixels.
        public var size: PixelSize
        /// How the image is fitted to ``size``.
        public var contentMode: ContentMode
        /// Whether an image smaller than the target may be scaled up. Default false.
        public var upscale: Bool
        /// With `aspectFill`, whether the overflow is cropped away (centred) so the result is
        /// exactly the target size.
        public var crop: Bool
        /// Whether pixels are averaged in linear light, the sRGB curve undone and redone
        /// (libvips' way for imgproxy's `IMGPROXY_USE_LINEAR_COLORSPACE`): a fine pattern keeps the
        /// brightness it looks, at about twice the time. Default false: in the encoded values, as
        /// Pillow, libvips and imgproxy do by default.
        public var linearLight = false

        /// The most pixels a target may have (what an upscale allocates per frame is 4 bytes each).
        public static let maxPixels = 100_000_000
        /// The longest side a target may have.
        public static let maxSide = 65_535

        /// Makes a resize. Throws unless `size` is at least 1 × 1, at most ``maxSide`` a side and
        /// ``maxPixels`` in all.
        public init(size: PixelSize, contentMode: ContentMode = .aspectFit, upscale: Bool = false, crop: Bool = false) throws(ImagoError) {
            try Self.validate(size)
            self.init(checkedSize: size, contentMode: contentMode, upscale: upscale, crop: crop)
        }

        /// A resize to a size Imago derived from an image's own (already within the limits).
        init(checkedSize size: PixelSize, contentMode: ContentMode = .aspectFit, upscale: Bool = false, crop: Bool = false) {
            self.size = size
            self.contentMode = contentMode
            self.upscale = upscale
            self.crop = crop
        }

        public var identifier: String {
            "imago.resize(\(size.width)x\(size.height),\(contentMode.rawValue)\(upscale ? ",upscale" : "")\(crop ? ",crop" : "")\(linearLight ? ",linear" : ""))"
        }

        /// The size the image is scaled to (before any crop), for an image of `width × height`.
        public func scaledSize(width: Int, height: Int) -> PixelSize {
            let scaleX = Double(size.width) / Double(width), scaleY = Double(size.height) / Double(height)
            func scaled(_ scale: Double) -> PixelSize {
                let scale = upscale ? scale : min(scale, 1)
                return PixelSize(width: max(1, Int((Double(width) * scale).rounded())), height: max(1, Int((Double(height) * scale).rounded())))
            }
            switch contentMode {
            case .aspectFit: return scaled(min(scaleX, scaleY))
            case .aspectFill: return scaled(max(scaleX, scaleY))
            case .center: return scaled(min(scaleX, scaleY, 1))
            case .fill:
                return upscale ? size : PixelSize(width: min(size.width, width), height: min(size.height, height))
            }
        }

        private static func validate(_ size: PixelSize) throws(ImagoError) {
            guard size.width > 0, size.height > 0 else { throw .processing("resize to \(size.width)×\(size.height): the target must be at least 1×1") }
            guard size.width <= maxSide, size.height <= maxSide, size.width * size.height <= maxPixels else {
                throw .processing("resize to \(size.width)×\(size.height): the target must be at most \(maxSide) a side and \(maxPixels) pixels")
            }
        }

        public func process(_ image: Image) throws(ImagoError) -> Image { try process(image, covering: nil) }

        /// `image` resized, its pixels covering `extent` of the picture (``Image/coveredSize``
        /// after a reduced decode), or their own size when nil.
        package func process(_ image: Image, covering extent: (width: Double, height: Double)?) throws(ImagoError) -> Image {
            try Self.validate(size)  // the property may have changed since init
            let scaled = scaledSize(width: image.width, height: image.height)
            let hasAlpha = image.metadata.hasAlpha
            let region = extent ?? (Double(image.width), Double(image.height))
            var result = image.mapFrames(width: scaled.width, height: scaled.height, gainMap: .region(x: 0, y: 0, width: region.width, height: region.height)) {
                linearLight
                    ? LinearLightResampler.resize(
                        $0, width: image.width, height: image.height, to: scaled.width, scaled.height, hasAlpha: hasAlpha, extent: extent)
                    : Resampler.resize($0, width: image.width, height: image.height, to: scaled.width, scaled.height, hasAlpha: hasAlpha, extent: extent)
            }
            result.metadata.decodeScale = nil
            return try croppedToTarget(result)
        }

        /// `options` asking decoders for the smallest scale whose result still covers this resize's
        /// target, so the resize can finish from a reduced decode.
        func reducedDecodingOptions(_ options: DecodingOptions) -> DecodingOptions {
            var options = options
            options.targetSize = size
            options.targetMode = contentMode == .aspectFill || contentMode == .fill ? .fill : .fit
            return options
        }

        /// This resize applied to `image`, decoded at a reduced scale: the size comes from the
        /// original's upright size, not from the reduced decode's (whose sides were rounded), so
        /// the result has the size a full decode would give, whatever scale the decode used.
        func finishingReducedDecode(_ image: Image) throws(ImagoError) -> Image {
            let metadata = image.metadata
            let swaps = metadata.orientationApplied.swapsDimensions
            let original = swaps ? (metadata.originalHeight, metadata.originalWidth) : (metadata.originalWidth, metadata.originalHeight)
            let exact = scaledSize(width: original.0, height: original.1)
            guard (exact.width, exact.height) != (image.width, image.height) else { return try croppedToTarget(image) }
            let scaled = try ImageProcessors.Resize(checkedSize: exact, contentMode: .fill, upscale: true).process(image, covering: image.coveredSize)
            return try croppedToTarget(scaled)
        }

        /// A scaled `image` cut to the target size (centred) when `crop` asks for it with
        /// `aspectFill`; otherwise as it is.
        func croppedToTarget(_ image: Image) throws(ImagoError) -> Image {
            guard crop, contentMode == .aspectFill, image.width > size.width || image.height > size.height else { return image }
            return try Crop.centered(width: min(size.width, image.width), height: min(size.height, image.height), in: image).process(image)
        }
    }
}
