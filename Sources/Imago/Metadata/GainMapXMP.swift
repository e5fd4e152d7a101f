import Foundation

/// Adobe's gain-map XMP (namespace `http://ns.adobe.com/hdr-gain-map/1.0/`, `hdrgm`), as Ultra HDR
/// JPEGs carry it: the gain map's own packet holds the numbers (as attributes, or as elements with
/// an `rdf:Seq` of three for a colour map), the primary's a Google container directory naming the
/// gain map's length. Values are log2 for the gains and capacities, linear for gamma and offsets.
/// Like ``XMP``, it finds what it needs by its text.
enum GainMapXMP {
    static let namespace = "http://ns.adobe.com/hdr-gain-map/1.0/"

    /// The metadata in an XMP packet; nil when it has no `hdrgm:Version`, `GainMapMax` or
    /// `HDRCapacityMax`, a value that does not parse, `BaseRenditionIsHDR="True"`, or unusable
    /// numbers. Missing optional values take the specification's defaults.
    static func read(_ data: Data) -> GainMapMetadata? {
        guard let xmp = XMP(data) else { return nil }
        let text = String(decoding: xmp.data, as: UTF8.self)
        guard let prefix = prefix(in: text) else { return nil }
        func values(_ name: String) -> [Double]?? {
            guard let raw = rawValues(of: "\(prefix):\(name)", in: text) else { return .some(nil) }
            let parsed = raw.compactMap { Double($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
            guard !raw.isEmpty, parsed.count == raw.count, parsed.count == 1 || parsed.count == 3 else { return nil }
            return .some(parsed)
        }
        guard rawValues(of: "\(prefix):Version", in: text) != nil else { return nil }
        if let base = rawValues(of: "\(prefix):BaseRenditionIsHDR", in: text)?.first, base.lowercased() == "true" { return nil }
        guard case .some(let maximum?) = values("GainMapMax"), case .some(let capacityMax?) = values("HDRCapacityMax"),
            case .some(let minimum) = values("GainMapMin"), case .some(let gamma) = values("Gamma"), case .some(let offsetSDR) = values("OffsetSDR"),
            case .some(let offsetHDR) = values("OffsetHDR"), case .some(let capacityMin) = values("HDRCapacityMin")
        else { return nil }
        let metadata = GainMapMetadata(
            gainMapMin: minimum ?? [0], gainMapMax: maximum, gamma: gamma ?? [1], baseOffset: offsetSDR ?? [1.0 / 64], alternateOffset: offsetHDR ?? [1.0 / 64],
            baseHeadroom: capacityMin?.first ?? 0, alternateHeadroom: capacityMax[0])
        return metadata.isUsable ? metadata : nil
    }

    /// The metadata of an Apple gain map (iOS 14–17 HEIC/JPEG auxiliary image
    /// `urn:com:apple:photo:2020:aux:hdrgainmap`) from its `HDRGainMap:HDRGainMapHeadroom` (stops),
    /// read as libultrahdr reads it: gains from 1 to 2^headroom, gamma 1, no offsets. Without it
    /// (iOS 14–16), the headroom comes from the primary's EXIF maker note (``AppleMakerNote``).
    static func readApple(_ data: Data, primaryEXIF: Data? = nil) -> GainMapMetadata? {
        guard let xmp = XMP(data) else { return nil }
        let text = String(decoding: xmp.data, as: UTF8.self)
        guard text.contains("urn:com:apple:photo:2020:aux:hdrgainmap") else { return nil }
        let stated = rawValues(of: "HDRGainMap:HDRGainMapHeadroom", in: text)?.first.flatMap { Double($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        guard let headroom = stated ?? primaryEXIF.flatMap(AppleMakerNote.headroom(exif:)) else { return nil }
        let metadata = GainMapMetadata(
            gainMapMin: [0], gainMapMax: [headroom], gamma: [1], baseOffset: [0], alternateOffset: [0], baseHeadroom: 0, alternateHeadroom: headroom)
        return metadata.isUsable ? metadata : nil
    }

    /// The length the primary's container directory gives the gain map (`Item:Length` of the item
    /// whose `Item:Semantic` is `GainMap`), or nil.
    static func gainMapLength(in data: Data) -> Int? {
        guard let xmp = XMP(data) else { return nil }
        let text = String(decoding: xmp.data, as: UTF8.self)
        guard let semantic = text.range(of: "Semantic=\"GainMap\"") else { return nil }
        // The attributes of the same Item element follow or precede it within its tag.
        let tagStart = text[..<semantic.lowerBound].lastIndex(of: "<") ?? text.startIndex
        let tagEnd = text[semantic.upperBound...].firstIndex(of: ">") ?? text.endIndex
        let tag = text[tagStart..<tagEnd]
        guard let length = tag.range(of: "Length=\"") else { return nil }
        let digits = tag[length.upperBound...].prefix { $0.isNumber }
        return Int(digits)
    }

    /// The prefix bound to the gain-map namespace (`hdrgm` in every file seen).
    private static func prefix(in text: String) -> String? {
        guard let binding = text.range(of: "=\"\(namespace)\"") else { return nil }
        let before = text[..<binding.lowerBound]
        guard let colon = before.lastIndex(of: ":") else { return nil }
        let name = before[before.index(after: colon)...]
        guard before[..<colon].hasSuffix("xmlns"), !name.isEmpty, name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" }) else { return nil }
        return String(name)
    }

    /// The values of `name`, written as an attribute (`name="1.5"`) or as an element holding text
    /// or an `rdf:Seq` of `rdf:li`; nil when neither is there.
    private static func rawValues(of name: String, in text: String) -> [String]? {
        if let attribute = text.range(of: "\(name)=\"") {
            let value = text[attribute.upperBound...].prefix { $0 != "\"" }
            return [String(value)]
        }
        guard let open = text.range(of: "<\(name)>"), let close = text.range(of: "</\(name)>", range: open.upperBound..<text.endIndex) else { return nil }
        let body = text[open.upperBound..<close.lowerBound]
        guard body.contains("<") else { return [String(body)] }
        var items: [String] = []
        var rest = body[...]
        while let start = rest.range(of: "<rdf:li>"), let end = rest.range(of: "</rdf:li>", range: start.upperBound..<rest.endIndex) {
            items.append(String(rest[start.upperBound..<end.lowerBound]))
            rest = rest[end.upperBound...]
            if items.count > 3 { return nil }
        }
        return items
    }

    /// The gain map's own packet for `metadata`.
    static func gainMapPacket(_ metadata: GainMapMetadata) -> Data {
        var attributes = "hdrgm:Version=\"1.0\""
        var elements = ""
        let fields: [(String, [Double])] = [
            ("GainMapMin", metadata.gainMapMin), ("GainMapMax", metadata.gainMapMax), ("Gamma", metadata.gamma), ("OffsetSDR", metadata.baseOffset),
            ("OffsetHDR", metadata.alternateOffset),
        ]
        for (name, values) in fields {
            if values[0] == values[1], values[0] == values[2] {
                attributes += " hdrgm:\(name)=\"\(values[0])\""
            } else {
                elements += "<hdrgm:\(name)><rdf:Seq>" + values.map { "<rdf:li>\($0)</rdf:li>" }.joined() + "</rdf:Seq></hdrgm:\(name)>"
            }
        }
        attributes +=
            " hdrgm:HDRCapacityMin=\"\(metadata.baseHeadroom)\" hdrgm:HDRCapacityMax=\"\(metadata.alternateHeadroom)\" hdrgm:BaseRenditionIsHDR=\"False\""
        let description =
            "<rdf:Description rdf:about=\"\" xmlns:hdrgm=\"\(namespace)\" \(attributes)" + (elements.isEmpty ? "/>" : ">\(elements)</rdf:Description>")
        return packet(description)
    }

    /// The primary's packet: the `hdrgm` version and Google's container directory of the primary
    /// and the gain map of `gainMapLength` bytes.
    static func primaryPacket(gainMapLength: Int) -> Data {
        let description =
            "<rdf:Description rdf:about=\"\" xmlns:Container=\"http://ns.google.com/photos/1.0/container/\" "
            + "xmlns:Item=\"http://ns.google.com/photos/1.0/container/item/\" xmlns:hdrgm=\"\(namespace)\" hdrgm:Version=\"1.0\">"
            + "<Container:Directory><rdf:Seq>"
            + "<rdf:li rdf:parseType=\"Resource\"><Container:Item Item:Semantic=\"Primary\" Item:Mime=\"image/jpeg\"/></rdf:li>"
            + "<rdf:li rdf:parseType=\"Resource\"><Container:Item Item:Semantic=\"GainMap\" Item:Mime=\"image/jpeg\" Item:Length=\"\(gainMapLength)\"/></rdf:li>"
            + "</rdf:Seq></Container:Directory></rdf:Description>"
        return packet(description)
    }

    private static func packet(_ description: String) -> Data {
        Data(
            ("<x:xmpmeta xmlns:x=\"adobe:ns:meta/\" x:xmptk=\"Imago\"><rdf:RDF xmlns:rdf=\"http://www.w3.org/1999/02/22-rdf-syntax-ns#\">"
                + description + "</rdf:RDF></x:xmpmeta>").utf8)
    }

    /// Whether an XMP packet speaks of a gain map: a kept source packet that does describes the
    /// source's container, not the output's, and is not written beside a new one.
    static func mentionsGainMap(_ data: Data) -> Bool {
        data.range(of: Data(namespace.utf8)) != nil || data.range(of: Data("photos/1.0/container/".utf8)) != nil
    }
}
