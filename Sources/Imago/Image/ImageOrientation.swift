/// EXIF orientation (tag 0x0112): how the stored pixels must be turned to appear upright.
public enum ImageOrientation: Int, Sendable, Hashable, CaseIterable {
    /// Stored upright (1).
    case up = 1
    /// Mirrored left to right (2).
    case upMirrored = 2
    /// Turned 180° (3).
    case down = 3
    /// Mirrored top to bottom (4).
    case downMirrored = 4
    /// Mirrored along the top-left to bottom-right diagonal (5).
    case leftMirrored = 5
    /// Must be turned 90° clockwise to be upright (6).
    case right = 6
    /// Mirrored along the top-right to bottom-left diagonal (7).
    case rightMirrored = 7
    /// Must be turned 90° counter-clockwise to be upright (8).
    case left = 8

    /// Whether turning swaps width and height.
    public var swapsDimensions: Bool { rawValue >= 5 }

    /// Turns `pixels` (RGBA8, `width × height`) upright; returns the new pixels, width and height.
    func apply(to pixels: [UInt8], width: Int, height: Int) -> (pixels: [UInt8], width: Int, height: Int) {
        guard self != .up else { return (pixels, width, height) }
        let outWidth = swapsDimensions ? height : width
        let outHeight = swapsDimensions ? width : height
        var out = [UInt8](repeating: 0, count: pixels.count)
        pixels.withUnsafeBytes { source in
            out.withUnsafeMutableBytes { target in
                let source = source.bindMemory(to: UInt32.self)
                let target = target.bindMemory(to: UInt32.self)
                for y in 0..<height {
                    for x in 0..<width {
                        // Where the stored pixel (x, y) lands in the upright image.
                        let (tx, ty): (Int, Int) =
                            switch self {
                            case .up: (x, y)
                            case .upMirrored: (width - 1 - x, y)
                            case .down: (width - 1 - x, height - 1 - y)
                            case .downMirrored: (x, height - 1 - y)
                            case .leftMirrored: (y, x)
                            case .right: (height - 1 - y, x)
                            case .rightMirrored: (height - 1 - y, width - 1 - x)
                            case .left: (y, width - 1 - x)
                            }
                        target[ty * outWidth + tx] = source[y * width + x]
                    }
                }
            }
        }
        return (out, outWidth, outHeight)
    }
}
