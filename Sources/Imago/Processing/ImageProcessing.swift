import Foundation

/// Something that turns one image into another: resize, crop, round, blur… Its identifier is part
/// of the memory-cache key of every image it made, so two processors with the same identifier must
/// make the same pixels.
public protocol ImageProcessing: Sendable {
    /// A stable description of what this processor does, parameters included
    /// (`"imago.resize(300x200,aspectFill,crop)"`).
    var identifier: String { get }

    /// The processed image. Animated images are processed frame by frame unless a processor
    /// says otherwise; a failure is an ``ImagoError`` at stage `.processing`.
    func process(_ image: Image) throws(ImagoError) -> Image
}

/// The processors Imago ships.
public enum ImageProcessors {}

extension ImageProcessors {
    /// Several processors applied in order, as one.
    public struct Composition: ImageProcessing {
        /// The processors, first applied first.
        public var processors: [any ImageProcessing]

        /// Makes a composition.
        public init(_ processors: [any ImageProcessing]) {
            self.processors = processors
        }

        public var identifier: String {
            processors.map(\.identifier).joined(separator: "|")
        }

        public func process(_ image: Image) throws(ImagoError) -> Image {
            var image = image
            for processor in processors { image = try processor.process(image) }
            return image
        }
    }
}

extension Image {
    /// This image with every frame's pixels replaced by `transform(pixels)`, at a new size, and
    /// its gain map moved as `gainMap` says (every caller states it: see ``GainMap/Geometry``).
    func mapFrames(width: Int, height: Int, hasAlpha: Bool? = nil, gainMap: GainMap.Geometry, _ transform: ([UInt8]) -> [UInt8]) -> Image {
        var metadata = self.metadata
        if let hasAlpha { metadata.hasAlpha = hasAlpha }
        // A reduced decode's partial last row and column are gone once the picture is remade.
        if width != self.width || height != self.height { metadata.decodeScale = nil }
        let frames = self.frames.map { Frame(pixels: transform($0.pixels), duration: $0.duration) }
        return Image(width: width, height: height, frames: frames, loopCount: loopCount, metadata: metadata).carryingGainMap(of: self, gainMap)
    }
}

extension ImagoError {
    /// A processor could not make its image: `reason` says why.
    static func processing(_ reason: String) -> ImagoError {
        ImagoError(.processingFailed(reason), url: nil, stage: .processing)
    }
}
