import Foundation
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A folder of saved images, each under an identifier handed back at save time (the photo-album
/// pattern: save, keep the asset's identifier, fetch it later).
///
/// Each image is one file, `<identifier>.<jpg|png|webp>`, written to a temporary name, synced
/// and renamed into place, so a reader sees a whole image or none; identifiers are random, so
/// saves from many threads (or processes) never collide.
public final class ImageLibrary: Sendable {
    /// Names one saved image.
    public struct Identifier: Sendable, Hashable, CustomStringConvertible {
        /// 32 lowercase hex digits.
        public let rawValue: String

        /// An identifier from its text; nil unless it is one this library could have made.
        public init?(rawValue: String) {
            guard rawValue.count == 32, rawValue.allSatisfy({ $0.isHexDigit && !$0.isUppercase }) else { return nil }
            self.rawValue = rawValue
        }

        public var description: String { rawValue }

        static func random() -> Identifier {
            Identifier(rawValue: String(format: "%016llx%016llx", UInt64.random(in: .min ... .max), UInt64.random(in: .min ... .max)))!
        }
    }

    /// Where the images are.
    public let directory: URL
    private static let extensions: [ImageFormat: String] = [.jpeg: "jpg", .png: "png", .webp: "webp"]

    /// Opens (or makes) the library in `directory`.
    public init(directory: URL) throws {
        self.directory = directory
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    /// Encodes `image` as `format` (JPEG and WebP at `quality`), writes it atomically and returns
    /// its new identifier.
    public func save(_ image: Image, format: ImageFormat = .png, quality: Int = 90) throws -> Identifier {
        guard let encoder = format.encoder(quality: quality) else {
            throw ImagoError(.invalidImage("the library cannot write \(format)"), url: nil, stage: .caching)
        }
        return try save(encoder.encode(image), format: format)
    }

    /// Stores already encoded bytes of `format` and returns their new identifier.
    public func save(_ data: Data, format: ImageFormat) throws -> Identifier {
        guard let ext = Self.extensions[format] else {
            throw ImagoError(.invalidImage("the library cannot write \(format)"), url: nil, stage: .caching)
        }
        let identifier = Identifier.random()
        let final = directory.appendingPathComponent("\(identifier.rawValue).\(ext)")
        let temporary = directory.appendingPathComponent(".\(identifier.rawValue).\(getpid()).tmp")
        try writeNewFile(data, at: temporary.path, syncs: true)
        guard rename(temporary.path, final.path) == 0 else {
            let error = POSIXError(errno, "rename to \(final.path)")
            unlink(temporary.path)
            throw error
        }
        return identifier
    }

    /// The encoded bytes saved under `identifier`, or nil.
    public func data(for identifier: Identifier) -> Data? {
        file(for: identifier).flatMap { try? Data(contentsOf: $0) }
    }

    /// The image saved under `identifier`, decoded, or nil when there is none.
    public func image(for identifier: Identifier, options: DecodingOptions = DecodingOptions()) throws -> Image? {
        guard let data = data(for: identifier) else { return nil }
        return try DecoderRegistry.standard().decode(data, options: options)
    }

    /// Every saved image's identifier, oldest first.
    public func identifiers() -> [Identifier] {
        let names =
            (try? FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: [.creationDateKey, .contentModificationDateKey])) ?? []
        return names.compactMap { url -> (Identifier, Date)? in
            guard Self.extensions.values.contains(url.pathExtension),
                let identifier = Identifier(rawValue: url.deletingPathExtension().lastPathComponent)
            else { return nil }
            let values = try? url.resourceValues(forKeys: [.contentModificationDateKey])
            return (identifier, values?.contentModificationDate ?? .distantPast)
        }
        .sorted { ($0.1, $0.0.rawValue) < ($1.1, $1.0.rawValue) }
        .map(\.0)
    }

    /// Deletes the image saved under `identifier`; returns whether there was one.
    @discardableResult
    public func delete(_ identifier: Identifier) -> Bool {
        guard let file = file(for: identifier) else { return false }
        return unlink(file.path) == 0
    }

    private func file(for identifier: Identifier) -> URL? {
        Self.extensions.values.lazy
            .map { self.directory.appendingPathComponent("\(identifier.rawValue).\($0)") }
            .first { FileManager.default.fileExists(atPath: $0.path) }
    }
}
