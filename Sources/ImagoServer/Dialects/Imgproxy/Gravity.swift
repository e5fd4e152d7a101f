/// Where a crop, an extension or a watermark is placed (imgproxy's `gravity` argument groups):
/// a type and its offsets.
public struct Gravity: Sendable, Hashable, Codable {
    /// The gravity types imgproxy's open-source build knows.
    public enum Kind: String, Sendable, Hashable, Codable, CaseIterable {
        /// The centre (`ce`), the default.
        case center = "ce"
        /// The top edge (`no`).
        case north = "no"
        /// The right edge (`ea`).
        case east = "ea"
        /// The bottom edge (`so`).
        case south = "so"
        /// The left edge (`we`).
        case west = "we"
        /// The top left corner (`nowe`).
        case northWest = "nowe"
        /// The top right corner (`noea`).
        case northEast = "noea"
        /// The bottom left corner (`sowe`).
        case southWest = "sowe"
        /// The bottom right corner (`soea`).
        case southEast = "soea"
        /// The most interesting region (`sm`), found by ``Imago/ImageProcessors/SmartCrop``.
        case smart = "sm"
        /// A focus point (`fp:x:y`), each coordinate a fraction 0…1 of the image.
        case focusPoint = "fp"
        /// imgproxy Pro's object gravity (`obj:class…`, or `objw:class:weight…`): the window that
        /// holds the most of the faces the server's face cascade finds. Faces are the one class
        /// Imago detects; without any, smart gravity or the centre, as
        /// `IMGPROXY_OBJECT_DETECTION_FALLBACK_TO_SMART_CROP` says.
        case objects = "obj"
        /// Tiled over the whole image (`re`, watermarks only).
        case replicate = "re"

        /// The nine compass points and the centre: what every gravity option accepts.
        static let common: [Kind] = [.center, .north, .east, .south, .west, .northWest, .northEast, .southWest, .southEast]
    }

    /// The type.
    public var kind: Kind
    /// The horizontal offset: pixels when its magnitude is 1 or more, else a fraction of the
    /// width; for a focus point, the point's x as a fraction.
    public var x: Double
    /// The vertical offset, as ``x``.
    public var y: Double
    /// The classes an object gravity asks for (`all` for any), those `objw` weighs above 0;
    /// empty asks for all.
    public var objectClasses: [String] = []

    /// A gravity of `kind` with offsets.
    public init(_ kind: Kind = .center, x: Double = 0, y: Double = 0) {
        self.kind = kind
        self.x = x
        self.y = y
    }

    /// Whether this is an object gravity that faces answer: it names `face` or `all`, or no class.
    var wantsFaces: Bool {
        kind == .objects && (objectClasses.isEmpty || objectClasses.contains("face") || objectClasses.contains("all"))
    }

    /// This gravity after the image it applies to is turned `angle` degrees clockwise and
    /// flipped, as imgproxy maps a gravity given for the output onto its source.
    func rotatedAndFlipped(angle: Int, flipX: Bool, flipY: Bool) -> Gravity {
        var g = self
        if flipX {
            g.kind =
                [.east: .west, .west: .east, .northWest: .northEast, .northEast: .northWest, .southWest: .southEast, .southEast: .southWest][g.kind] ?? g.kind
            switch g.kind {
            case .center, .north, .south: g.x = -g.x
            case .focusPoint: g.x = 1 - g.x
            default: break
            }
        }
        if flipY {
            g.kind =
                [.north: .south, .south: .north, .northWest: .southWest, .northEast: .southEast, .southWest: .northWest, .southEast: .northEast][g.kind]
                ?? g.kind
            switch g.kind {
            case .center, .east, .west: g.y = -g.y
            case .focusPoint: g.y = 1 - g.y
            default: break
            }
        }
        switch ((angle % 360) + 360) % 360 {
        case 90:
            g.kind =
                [
                    .north: .west, .east: .north, .south: .east, .west: .south, .northWest: .southWest, .northEast: .northWest, .southWest: .southEast,
                    .southEast: .northEast,
                ][g.kind] ?? g.kind
            switch g.kind {
            case .center, .east, .west: (g.x, g.y) = (g.y, -g.x)
            case .focusPoint: (g.x, g.y) = (g.y, 1 - g.x)
            default: (g.x, g.y) = (g.y, g.x)
            }
        case 180:
            g.kind =
                [
                    .north: .south, .east: .west, .south: .north, .west: .east, .northWest: .southEast, .northEast: .southWest, .southWest: .northEast,
                    .southEast: .northWest,
                ][g.kind] ?? g.kind
            switch g.kind {
            case .center: (g.x, g.y) = (-g.x, -g.y)
            case .north, .south: g.x = -g.x
            case .east, .west: g.y = -g.y
            case .focusPoint: (g.x, g.y) = (1 - g.x, 1 - g.y)
            default: break
            }
        case 270:
            g.kind =
                [
                    .north: .east, .east: .south, .south: .west, .west: .north, .northWest: .northEast, .northEast: .southEast, .southWest: .northWest,
                    .southEast: .southWest,
                ][g.kind] ?? g.kind
            switch g.kind {
            case .center, .north, .south: (g.x, g.y) = (-g.y, g.x)
            case .focusPoint: (g.x, g.y) = (1 - g.y, g.x)
            default: (g.x, g.y) = (g.y, g.x)
            }
        default: break
        }
        return g
    }
}
