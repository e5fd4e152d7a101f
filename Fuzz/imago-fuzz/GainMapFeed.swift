import Foundation

@testable import Imago

/// Hostile Ultra HDR JPEGs and their parts: the whole file decoded with the gain map kept (the MPF
/// index, the container XMP's length, the secondary JPEG and its metadata found and decoded, turned
/// and scaled with the base), then every geometric step and the encoder over what came out; and
/// the readers alone on the raw bytes (ISO 21496-1, hdrgm and Apple XMP, Apple's maker note, the
/// MPF index). The first
/// byte picks limits and a reduced decode.
enum GainMapFeed {
    static func run(_ data: Data) {
        guard let first = data.first else { return }
        let body = Data(data.dropFirst())
        _ = ISOGainMapMetadata.read(body)
        _ = GainMapXMP.read(body)
        _ = GainMapXMP.readApple(body)
        _ = AppleMakerNote.headroom(exif: body)
        _ = GainMapXMP.gainMapLength(in: body)
        _ = body.withUnsafeBytes { MultiPictureIndex(tiff: $0) }
        var options = DecodingOptions()
        options.gainMapHandling = .keep
        options.maxDecodedBytes = 128 << 20
        if first & 1 != 0 { options.targetSize = PixelSize(width: 8 + Int(first >> 3), height: 8 + Int(first >> 3)) }
        if first & 2 != 0 { options.maxPixels = 1 << 16 }
        if first & 4 != 0 { options.colorProfileHandling = .keep }
        _ = JPEGDecoder().estimate(body, options: options)
        guard let image = try? JPEGDecoder().decode(body, options: options), let map = image.gainMap else { return }
        // A kept map is never larger than its base and always whole.
        precondition(map.pixels.count == map.width * map.height * 4)
        _ = map.hdrRendition(of: try! ImageProcessors.Resize(size: PixelSize(width: 16, height: 16)).process(image), headroom: Double(first % 16) + 1)
        let steps: [any ImageProcessing] = [
            try! ImageProcessors.Crop(x: Int(first % 7), y: 1, width: 5, height: 9), ImageProcessors.Rotate(degrees: 90)!,
            try! ImageProcessors.Extend(width: image.width + 3, height: image.height + 2, x: 2, y: -1, background: .black),
            ImageProcessors.Flip(horizontal: true, vertical: false),
        ]
        for step in steps {
            guard let processed = try? step.process(image) else { continue }
            _ = try? JPEGEncoder(quality: 50).encode(processed)
        }
    }
}
