import Foundation
import Imago

/// A grid of thumbnails on a light grey sheet, each fitted into a square cell and centred: the
/// demo's picture of what it loaded.
struct ContactSheet {
    var cell = 160
    var gap = 8
    var columns = 10

    func make(_ images: [Image]) throws -> Image {
        let rows = max(1, (images.count + columns - 1) / columns)
        let columnCount = min(columns, max(images.count, 1))
        let width = gap + columnCount * (cell + gap), height = gap + rows * (cell + gap)
        var sheet = [UInt8](repeating: 235, count: width * height * 4)
        let fit = try ImageProcessors.Resize(size: PixelSize(width: cell, height: cell))
        for (index, image) in images.enumerated() {
            let thumbnail = try fit.process(Image(width: image.width, height: image.height, frames: [image.frames[0]], metadata: image.metadata))
            let left = gap + (index % columns) * (cell + gap) + (cell - thumbnail.width) / 2
            let top = gap + (index / columns) * (cell + gap) + (cell - thumbnail.height) / 2
            draw(thumbnail, on: &sheet, width: width, x: left, y: top)
        }
        for alphaIndex in stride(from: 3, to: sheet.count, by: 4) { sheet[alphaIndex] = 255 }
        return Image(
            width: width, height: height, frames: [Image.Frame(pixels: sheet)],
            metadata: ImageMetadata(format: .png, originalWidth: width, originalHeight: height, hasAlpha: false))
    }

    /// Paints `image` over the sheet at (`x`, `y`), blending by its alpha.
    private func draw(_ image: Image, on sheet: inout [UInt8], width: Int, x: Int, y: Int) {
        let pixels = image.pixels
        for row in 0..<image.height {
            for column in 0..<image.width {
                let source = (row * image.width + column) * 4
                let target = ((y + row) * width + x + column) * 4
                let alpha = Int(pixels[source + 3])
                for channel in 0..<3 {
                    sheet[target + channel] = UInt8((Int(pixels[source + channel]) * alpha + Int(sheet[target + channel]) * (255 - alpha) + 127) / 255)
                }
            }
        }
    }
}
