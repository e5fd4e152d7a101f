import Foundation

/// A ThumbHash (Evan Wallace's format, about 25 bytes): an image's average colour, aspect ratio,
/// alpha and a few DCT terms of its luminance, chroma and alpha, from which ``render()`` paints a
/// blurred stand-in. Encoded as the reference encoder encodes (single precision, the same terms in
/// the same order), so the bytes are the reference's for the same pixels.
public struct ThumbHash: Sendable, Hashable {
    /// The hash's bytes.
    public let bytes: [UInt8]

    /// π rounded to the nearest float, as Rust's `f32::consts::PI` (`Float.pi` rounds toward zero,
    /// which tips terms that sum to zero the other way).
    private static let pi = Float(Double.pi)

    /// The longest side ``init(pixels:width:height:)`` takes: larger images gain nothing but time
    /// (``init(image:)`` scales them down first).
    public static let maxSide = 100

    /// A hash from its bytes, checked to hold every term its header announces.
    public init?(bytes: [UInt8]) {
        guard Header(bytes) != nil else { return nil }
        self.bytes = bytes
    }

    /// A hash from its base64 text (standard or URL-safe alphabet, padded or not).
    public init?(base64 text: String) {
        var text = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        guard text.count <= 256 else { return nil }
        while text.count % 4 != 0 { text += "=" }
        guard let data = Data(base64Encoded: text) else { return nil }
        self.init(bytes: [UInt8](data))
    }

    /// The bytes as standard base64 without padding, as the reference's examples print them.
    public var base64: String {
        var text = Data(bytes).base64EncodedString()
        while text.hasSuffix("=") { text.removeLast() }
        return text
    }

    /// The hash of an image's first frame: scaled down to fit ``maxSide`` (Lanczos, as any resize
    /// here), unpremultiplied RGBA.
    public init(image: Image) throws(ImagoError) {
        let fitted = try Placeholders.fitted(image, side: Self.maxSide)
        self.init(pixels: fitted.pixels, width: fitted.width, height: fitted.height)
    }

    /// The hash of `width × height` RGBA pixels (not premultiplied), each side 1…``maxSide``.
    public init(pixels: [UInt8], width: Int, height: Int) {
        precondition((1...Self.maxSide).contains(width) && (1...Self.maxSide).contains(height) && pixels.count == width * height * 4)
        bytes = Self.encode(pixels, width: width, height: height)
    }

    /// The image's aspect ratio (width over height) as the hash keeps it.
    public var aspectRatio: Double { Double(Header(bytes)!.aspectRatio) }

    /// The average colour, RGBA, each 0…1.
    public var averageColor: (red: Double, green: Double, blue: Double, alpha: Double) {
        let header = Header(bytes)!
        let (l, p, q) = (header.lDC, header.pDC, header.qDC)
        let b = l - 2 / 3 * p
        let r = (3 * l - b + q) / 2
        let g = r - q
        func unit(_ value: Float) -> Double { Double(max(0, min(1, value))) }
        return (unit(r), unit(g), unit(b), unit(header.aDC))
    }

    // MARK: Encoding

    private static func encode(_ rgba: [UInt8], width w: Int, height h: Int) -> [UInt8] {
        // The average colour, weighted by alpha.
        var (avgR, avgG, avgB, avgA): (Float, Float, Float, Float) = (0, 0, 0, 0)
        for i in stride(from: 0, to: rgba.count, by: 4) {
            let alpha = Float(rgba[i + 3]) / 255
            avgR += alpha / 255 * Float(rgba[i])
            avgG += alpha / 255 * Float(rgba[i + 1])
            avgB += alpha / 255 * Float(rgba[i + 2])
            avgA += alpha
        }
        if avgA > 0 {
            avgR /= avgA
            avgG /= avgA
            avgB /= avgA
        }
        let hasAlpha = avgA < Float(w * h)
        let lLimit = hasAlpha ? 5 : 7  // fewer luminance terms when alpha needs the room
        let lx = max(1, Int((Float(lLimit * w) / Float(max(w, h))).rounded()))
        let ly = max(1, Int((Float(lLimit * h) / Float(max(w, h))).rounded()))
        // LPQA: luminance, yellow–blue, red–green, alpha; colour composited over the average.
        var l = [Float](), p = [Float](), q = [Float](), a = [Float]()
        for i in stride(from: 0, to: rgba.count, by: 4) {
            let alpha = Float(rgba[i + 3]) / 255
            let r = avgR * (1 - alpha) + alpha / 255 * Float(rgba[i])
            let g = avgG * (1 - alpha) + alpha / 255 * Float(rgba[i + 1])
            let b = avgB * (1 - alpha) + alpha / 255 * Float(rgba[i + 2])
            l.append((r + g + b) / 3)
            p.append((r + g) / 2 - b)
            q.append(r - g)
            a.append(alpha)
        }
        let lTerms = encodeChannel(l, nx: max(lx, 3), ny: max(ly, 3), width: w, height: h)
        let pTerms = encodeChannel(p, nx: 3, ny: 3, width: w, height: h)
        let qTerms = encodeChannel(q, nx: 3, ny: 3, width: w, height: h)
        let aTerms = hasAlpha ? encodeChannel(a, nx: 5, ny: 5, width: w, height: h) : (dc: 1, ac: [], scale: 1)

        let isLandscape = w > h
        func rounded(_ value: Float) -> UInt32 { UInt32(max(0, value.rounded())) }
        let header24 =
            rounded(63 * lTerms.dc) | rounded(31.5 + 31.5 * pTerms.dc) << 6 | rounded(31.5 + 31.5 * qTerms.dc) << 12
            | rounded(31 * lTerms.scale) << 18 | (hasAlpha ? 1 << 23 : 0)
        let header16 =
            UInt32(isLandscape ? ly : lx) | rounded(63 * pTerms.scale) << 3 | rounded(63 * qTerms.scale) << 9 | (isLandscape ? 1 << 15 : 0)
        var hash: [UInt8] = [
            UInt8(header24 & 255), UInt8(header24 >> 8 & 255), UInt8(truncatingIfNeeded: header24 >> 16),
            UInt8(header16 & 255), UInt8(truncatingIfNeeded: header16 >> 8),
        ]
        if hasAlpha { hash.append(UInt8(truncatingIfNeeded: rounded(15 * aTerms.dc) | rounded(15 * aTerms.scale) << 4)) }
        var isOdd = false
        for term in lTerms.ac + pTerms.ac + qTerms.ac + aTerms.ac {
            let nibble = UInt8(truncatingIfNeeded: rounded(15 * term))
            if isOdd { hash[hash.count - 1] |= nibble << 4 } else { hash.append(nibble) }
            isOdd.toggle()
        }
        return hash
    }

    /// The DC term, the AC terms (normalised to 0…1 by the largest) and that largest, for the
    /// triangle of `nx × ny` frequencies the format keeps.
    private static func encodeChannel(_ channel: [Float], nx: Int, ny: Int, width w: Int, height h: Int) -> (dc: Float, ac: [Float], scale: Float) {
        var dc: Float = 0, scale: Float = 0
        var ac: [Float] = []
        var fx = [Float](repeating: 0, count: w)
        for cy in 0..<ny {
            var cx = 0
            while cx * ny < nx * (ny - cy) {
                var f: Float = 0
                for x in 0..<w { fx[x] = cosf(Self.pi / Float(w) * Float(cx) * (Float(x) + 0.5)) }
                for y in 0..<h {
                    let fy = cosf(Self.pi / Float(h) * Float(cy) * (Float(y) + 0.5))
                    for x in 0..<w { f += channel[x + y * w] * fx[x] * fy }
                }
                f /= Float(w * h)
                if cx > 0 || cy > 0 {
                    ac.append(f)
                    scale = max(abs(f), scale)
                } else {
                    dc = f
                }
                cx += 1
            }
        }
        if scale > 0 { ac = ac.map { 0.5 + 0.5 / scale * $0 } }
        return (dc, ac, scale)
    }

    // MARK: Decoding

    /// What the first bytes say, and the AC terms, read with every length checked.
    private struct Header {
        var lDC: Float, pDC: Float, qDC: Float, aDC: Float
        var lScale: Float, pScale: Float, qScale: Float, aScale: Float
        var hasAlpha: Bool, isLandscape: Bool
        var lx: Int, ly: Int
        var l: [Float] = [], p: [Float] = [], q: [Float] = [], a: [Float] = []

        init?(_ hash: [UInt8]) {
            guard hash.count >= 5 else { return nil }
            let header24 = UInt32(hash[0]) | UInt32(hash[1]) << 8 | UInt32(hash[2]) << 16
            let header16 = UInt32(hash[3]) | UInt32(hash[4]) << 8
            lDC = Float(header24 & 63) / 63
            pDC = Float(header24 >> 6 & 63) / 31.5 - 1
            qDC = Float(header24 >> 12 & 63) / 31.5 - 1
            lScale = Float(header24 >> 18 & 31) / 31
            hasAlpha = header24 >> 23 != 0
            pScale = Float(header16 >> 3 & 63) / 63
            qScale = Float(header16 >> 9 & 63) / 63
            isLandscape = header16 >> 15 != 0
            shortSideTerms = Int(header16 & 7)
            let lMax = hasAlpha ? 5 : 7
            lx = max(3, isLandscape ? lMax : Int(header16 & 7))
            ly = max(3, isLandscape ? Int(header16 & 7) : lMax)
            var offset = 5
            (aDC, aScale) = (1, 1)
            if hasAlpha {
                guard hash.count > offset else { return nil }
                (aDC, aScale) = (Float(hash[offset] & 15) / 15, Float(hash[offset] >> 4) / 15)
                offset += 1
            }
            // Nibbles, low then high, boosting chroma by 1.25 against the quantisation.
            var nibble = offset * 2
            func channel(_ nx: Int, _ ny: Int, _ scale: Float) -> [Float]? {
                var terms: [Float] = []
                for cy in 0..<ny {
                    var cx = cy > 0 ? 0 : 1
                    while cx * ny < nx * (ny - cy) {
                        guard nibble / 2 < hash.count else { return nil }
                        let byte = hash[nibble / 2]
                        let bits = nibble % 2 == 0 ? byte & 15 : byte >> 4
                        terms.append((Float(bits) / 7.5 - 1) * scale)
                        nibble += 1
                        cx += 1
                    }
                }
                return terms
            }
            guard let l = channel(lx, ly, lScale), let p = channel(3, 3, pScale * 1.25), let q = channel(3, 3, qScale * 1.25) else { return nil }
            (self.l, self.p, self.q) = (l, p, q)
            if hasAlpha {
                guard let a = channel(5, 5, aScale) else { return nil }
                self.a = a
            }
        }

        /// The reference's `thumb_hash_to_approximate_aspect_ratio`: the luminance terms' ratio.
        var aspectRatio: Float {
            let lMax = hasAlpha ? 5 : 7
            let (lx, ly) = isLandscape ? (lMax, shortSideTerms) : (shortSideTerms, lMax)
            return Float(lx) / Float(ly)
        }

        /// The low three bits of the second header: the short side's luminance terms.
        var shortSideTerms = 0
    }

    /// The placeholder the hash describes: 32 pixels on its longer side at its aspect ratio, RGBA
    /// (alpha 255 unless the hash has alpha), as the reference decoder paints it.
    public func render() -> Image {
        let header = Header(bytes)!
        let ratio = aspectRatio
        let (w, h) = ratio > 1 ? (32, Int((32 / Float(ratio)).rounded())) : (Int((32 * Float(ratio)).rounded()), 32)
        return Placeholders.image(width: max(w, 1), height: max(h, 1), pixels: Self.paint(header, width: max(w, 1), height: max(h, 1)), alpha: header.hasAlpha)
    }

    /// The placeholder painted at `width × height` (1…``Placeholders/maxRenderSide`` a side),
    /// for a view of that size: the same terms, sampled at more points.
    public func render(width: Int, height: Int) throws(ImagoError) -> Image {
        try Placeholders.checkRenderSize(width, height)
        let header = Header(bytes)!
        return Placeholders.image(width: width, height: height, pixels: Self.paint(header, width: width, height: height), alpha: header.hasAlpha)
    }

    private static func paint(_ header: Header, width w: Int, height h: Int) -> [UInt8] {
        var rgba = [UInt8](repeating: 0, count: w * h * 4)
        var fx = [Float](repeating: 0, count: 7), fy = [Float](repeating: 0, count: 7)
        let (lx, ly) = (header.lx, header.ly)
        for y in 0..<h {
            for x in 0..<w {
                var (l, p, q, a) = (header.lDC, header.pDC, header.qDC, header.aDC)
                for cx in 0..<max(lx, header.hasAlpha ? 5 : 3) { fx[cx] = cosf(Self.pi / Float(w) * (Float(x) + 0.5) * Float(cx)) }
                for cy in 0..<max(ly, header.hasAlpha ? 5 : 3) { fy[cy] = cosf(Self.pi / Float(h) * (Float(y) + 0.5) * Float(cy)) }
                var j = 0
                for cy in 0..<ly {
                    var cx = cy > 0 ? 0 : 1
                    let fy2 = fy[cy] * 2
                    while cx * ly < lx * (ly - cy) {
                        l += header.l[j] * fx[cx] * fy2
                        j += 1
                        cx += 1
                    }
                }
                j = 0
                for cy in 0..<3 {
                    var cx = cy > 0 ? 0 : 1
                    let fy2 = fy[cy] * 2
                    while cx < 3 - cy {
                        let f = fx[cx] * fy2
                        p += header.p[j] * f
                        q += header.q[j] * f
                        j += 1
                        cx += 1
                    }
                }
                if header.hasAlpha {
                    j = 0
                    for cy in 0..<5 {
                        var cx = cy > 0 ? 0 : 1
                        let fy2 = fy[cy] * 2
                        while cx < 5 - cy {
                            a += header.a[j] * fx[cx] * fy2
                            j += 1
                            cx += 1
                        }
                    }
                }
                let b = l - 2 / 3 * p
                let r = (3 * l - b + q) / 2
                let g = r - q
                let at = (y * w + x) * 4
                rgba[at] = Self.byte(r)
                rgba[at + 1] = Self.byte(g)
                rgba[at + 2] = Self.byte(b)
                rgba[at + 3] = Self.byte(a)
            }
        }
        return rgba
    }

    /// 0…1 to a byte, as the reference's `(255.0 * x.clamp(0.0, 1.0)) as u8` (truncation).
    private static func byte(_ value: Float) -> UInt8 {
        guard value.isFinite else { return 0 }
        return UInt8(255 * max(0, min(1, value)))
    }
}
