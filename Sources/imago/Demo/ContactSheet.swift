import Foundation
import Imago

/// A grid of thumbnails on a light grey sheet, each fitted into a square cell and centred, with
/// caption lines under it: the demo's picture of what it loaded.
struct ContactSheet {
    /// One image and the lines written under it.
    struct Entry {
        var image: Image
        var caption: [String]
    }

    var cell = 160
    var gap = 8
    var columns = 10
    /// Caption lines under each cell.
    var captionLines = 2
    static let lineHeight = BitmapFont.height + 3

    func make(_ entries: [Entry]) throws -> Image {
        let rows = max(1, (entries.count + columns - 1) / columns)
        let columnCount = min(columns, max(entries.count, 1))
        let cellHeight = cell + captionLines * Self.lineHeight
        let width = gap + columnCount * (cell + gap), height = gap + rows * (cellHeight + gap)
        var sheet = [UInt8](repeating: 235, count: width * height * 4)
        let fit = try ImageProcessors.Resize(size: PixelSize(width: cell, height: cell))
        for (index, entry) in entries.enumerated() {
            let image = entry.image
            let thumbnail = try fit.process(Image(width: image.width, height: image.height, frames: [image.frames[0]], metadata: image.metadata))
            let cellLeft = gap + (index % columns) * (cell + gap), cellTop = gap + (index / columns) * (cellHeight + gap)
            draw(thumbnail, on: &sheet, width: width, x: cellLeft + (cell - thumbnail.width) / 2, y: cellTop + (cell - thumbnail.height) / 2)
            for (line, text) in entry.caption.prefix(captionLines).enumerated() {
                write(BitmapFont.fitted(text, maxWidth: cell), on: &sheet, width: width, x: cellLeft, y: cellTop + cell + 2 + line * Self.lineHeight)
            }
        }
        for alphaIndex in stride(from: 3, to: sheet.count, by: 4) { sheet[alphaIndex] = 255 }
        return Image(
            width: width, height: height, frames: [Image.Frame(pixels: sheet)],
            metadata: ImageMetadata(format: .png, originalWidth: width, originalHeight: height, hasAlpha: false))
    }

    /// Writes `text` in dark grey with its top-left corner at (`x`, `y`).
    private func write(_ text: String, on sheet: inout [UInt8], width: Int, x: Int, y: Int) {
        for (index, character) in text.enumerated() {
            for row in 0..<BitmapFont.height {
                for column in 0..<BitmapFont.width where BitmapFont.isSet(character, x: column, y: row) {
                    let target = ((y + row) * width + x + index * BitmapFont.advance + column) * 4
                    guard target >= 0, target + 2 < sheet.count else { continue }
                    for channel in 0..<3 { sheet[target + channel] = 40 }
                }
            }
        }
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
