#if canImport(CoreGraphics)
    import CoreGraphics
    import Foundation

    // Not compiled on Linux: CoreGraphics exists on Apple platforms only (see the README's limits).
    extension Image {
        /// The first frame as a `CGImage`: 8-bit RGBA with straight alpha (or alpha skipped when the
        /// image has none), device RGB.
        public var cgImage: CGImage? {
            guard let provider = CGDataProvider(data: Data(pixels) as CFData) else { return nil }
            let alpha: CGImageAlphaInfo = metadata.hasAlpha ? .last : .noneSkipLast
            return CGImage(
                width: width, height: height, bitsPerComponent: 8, bitsPerPixel: 32, bytesPerRow: width * 4,
                space: CGColorSpaceCreateDeviceRGB(), bitmapInfo: CGBitmapInfo(rawValue: alpha.rawValue),
                provider: provider, decode: nil, shouldInterpolate: true, intent: .defaultIntent
            )
        }
    }
#endif
