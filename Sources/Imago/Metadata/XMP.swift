import Foundation

/// An XMP packet (RDF/XML). Imago does not parse XML: it finds the few elements it keeps by
/// their text, in packets no larger than ``maxSize``.
struct XMP {
    /// The packet's bytes.
    let data: Data

    /// The largest packet Imago keeps: XMP in a JPEG is at most 64 KB without Adobe's extension.
    static let maxSize = 1 << 20

    init?(_ data: Data) {
        guard !data.isEmpty, data.count <= Self.maxSize else { return nil }
        self.data = data
    }

    private var text: String { String(decoding: data, as: UTF8.self) }

    /// The `dc:rights` and `dc:creator` elements whole (start tag to end tag), as written.
    private var copyrightElements: [Substring] {
        let text = text
        return ["dc:creator", "dc:rights"].compactMap { name in
            guard let start = text.range(of: "<\(name)>"), let end = text.range(of: "</\(name)>", range: start.upperBound..<text.endIndex) else { return nil }
            return text[start.lowerBound..<end.upperBound]
        }
    }

    /// A packet of only the creator and rights (as imgproxy's `keep_copyright` keeps them), or
    /// nil when it has neither.
    func copyrightOnly() -> XMP? {
        let elements = copyrightElements
        guard !elements.isEmpty else { return nil }
        let packet =
            "<?xpacket begin=\"\u{FEFF}\" id=\"W5M0MpCehiHzreSzNTczkc9d\"?>"
            + "<x:xmpmeta xmlns:x=\"adobe:ns:meta/\"><rdf:RDF xmlns:rdf=\"http://www.w3.org/1999/02/22-rdf-syntax-ns#\">"
            + "<rdf:Description rdf:about=\"\" xmlns:dc=\"http://purl.org/dc/elements/1.1/\">" + elements.joined()
            + "</rdf:Description></rdf:RDF></x:xmpmeta><?xpacket end=\"r\"?>"
        return XMP(Data(packet.utf8))
    }

    /// This packet with `tiff:Orientation` set to 1 (the pixels were turned upright).
    func orientationReset() -> XMP {
        var text = text
        for digit in 2...8 {
            text = text.replacingOccurrences(of: "tiff:Orientation=\"\(digit)\"", with: "tiff:Orientation=\"1\"")
            text = text.replacingOccurrences(of: "<tiff:Orientation>\(digit)</tiff:Orientation>", with: "<tiff:Orientation>1</tiff:Orientation>")
        }
        return XMP(Data(text.utf8)) ?? self
    }
}

extension DecodingOptions {
    /// The EXIF and XMP a decoder keeps in ``ImageMetadata``, as ``metadataHandling`` says, from
    /// the blocks its file holds: none; the copyright and author only; or all, with the
    /// orientation set to 1 when `turned` (the pixels were turned upright). GPS goes only with all.
    func keptMetadata(exif: Data?, xmp: Data?, turned: Bool) -> (exif: Data?, xmp: Data?) {
        let exif = exif.flatMap(EXIF.init), xmp = xmp.flatMap(XMP.init)
        switch metadataHandling {
        case .strip:
            return (nil, nil)
        case .copyright:
            return (exif?.copyrightOnly()?.data, xmp?.copyrightOnly()?.data)
        case .all:
            return ((turned ? exif?.orientationReset() : exif)?.data, (turned ? xmp?.orientationReset() : xmp)?.data)
        }
    }
}
