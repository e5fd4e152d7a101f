import Foundation

/// What a camera RAW file declares: what `imago info` reports of a RAW source, in
/// ``ImageMetadata/raw``.
public struct RAWInfo: Sendable, Hashable, Encodable {
    /// The format (``ImageFormat/dng``, ``ImageFormat/nef``, …).
    public var format: ImageFormat
    /// The camera's maker, as LibRaw names it.
    public var make: String
    /// The camera's model.
    public var model: String
    /// The sensor data's width in pixels (masked borders included).
    public var sensorWidth: Int
    /// The sensor data's height in pixels.
    public var sensorHeight: Int
    /// The embedded preview's width as declared, nil when the file has none or does not say.
    public var previewWidth: Int?
    /// The embedded preview's height as declared.
    public var previewHeight: Int?
    /// The ISO speed, nil when not known.
    public var iso: Double?
    /// The exposure time in seconds, nil when not known.
    public var exposureTime: Double?
    /// The f-number, nil when not known.
    public var aperture: Double?
    /// The focal length in millimetres, nil when not known.
    public var focalLength: Double?
    /// When the picture was taken, nil when not known.
    public var date: Date?
    /// Which picture the decode delivered: the embedded preview, or the sensor data developed at
    /// half or full size.
    public var developed: Development

    /// Where a RAW decode's pixels come from.
    public enum Development: String, Sendable, Hashable, Encodable {
        /// The JPEG (or bitmap) the camera embedded: large enough for the size asked for.
        case preview
        /// The sensor data demosaiced at half size (each 2×2 of the mosaic one pixel).
        case half
        /// The sensor data demosaiced at full size.
        case full
    }

    private enum CodingKeys: String, CodingKey {
        case format, make, model, sensorWidth, sensorHeight, previewWidth, previewHeight, iso, exposureTime, aperture, focalLength, date, developed
    }

    /// Writes every field known, the format by its name and the date in ISO 8601.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(format.rawValue, forKey: .format)
        try container.encode(make, forKey: .make)
        try container.encode(model, forKey: .model)
        try container.encode(sensorWidth, forKey: .sensorWidth)
        try container.encode(sensorHeight, forKey: .sensorHeight)
        try container.encodeIfPresent(previewWidth, forKey: .previewWidth)
        try container.encodeIfPresent(previewHeight, forKey: .previewHeight)
        try container.encodeIfPresent(iso, forKey: .iso)
        try container.encodeIfPresent(exposureTime, forKey: .exposureTime)
        try container.encodeIfPresent(aperture, forKey: .aperture)
        try container.encodeIfPresent(focalLength, forKey: .focalLength)
        try container.encodeIfPresent(date.map { ISO8601DateFormatter().string(from: $0) }, forKey: .date)
        try container.encode(developed, forKey: .developed)
    }

    /// One line for people: the camera, the shot, the sensor, the picture decoded.
    public var summary: String {
        var parts = ["\(make) \(model)".trimmingCharacters(in: .whitespaces), "sensor \(sensorWidth)×\(sensorHeight)"]
        if let iso { parts.append(String(format: "ISO %.0f", iso)) }
        if let exposureTime { parts.append(exposureTime < 1 ? String(format: "1/%.0f s", 1 / exposureTime) : String(format: "%.1f s", exposureTime)) }
        if let aperture { parts.append(String(format: "f/%.1f", aperture)) }
        if let focalLength { parts.append(String(format: "%.0f mm", focalLength)) }
        if let previewWidth, let previewHeight { parts.append("preview \(previewWidth)×\(previewHeight)") }
        parts.append("decoded from its \(developed == .preview ? "preview" : "sensor data at \(developed.rawValue) size")")
        return parts.joined(separator: ", ")
    }
}
