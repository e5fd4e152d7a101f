import Foundation
import Testing

@testable import Imago

/// libvips 8.18 with libultrahdr (PyPI's pyvips-binary in the peers' venv) through
/// `Tests/Peers/uhdr_reference.py`: it makes Ultra HDR files, finds gain maps in Imago's, and
/// reconstructs HDR renditions, as the reference nobody here wrote.
enum UltraHDRReference {
    static let script = ObjectStorePeer.project.appendingPathComponent("Tests/Peers/uhdr_reference.py").path

    /// Whether the venv has pyvips (`make test` installs it).
    static var isInstalled: Bool {
        let lib = ObjectStorePeer.project.appendingPathComponent(".venv-peers/lib")
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: lib.path)) ?? []
        return versions.contains { FileManager.default.fileExists(atPath: lib.appendingPathComponent("\($0)/site-packages/pyvips_binary.libs").path) }
    }

    /// What libvips finds in a file.
    struct Facts: Decodable {
        struct GainMap: Decodable {
            var width: Int
            var height: Int
            var bands: Int
            var maxContentBoost: [Double]
            var minContentBoost: [Double]
            var gamma: [Double]
            var offsetSDR: [Double]
            var offsetHDR: [Double]
            var hdrCapacityMin: Double
            var hdrCapacityMax: Double
        }
        var width: Int
        var height: Int
        var gainMap: GainMap?
    }

    private static func run(_ arguments: [String]) async throws -> Data {
        let run = try await runProcess(ObjectStorePeer.python, [script] + arguments, withStandardError: true)
        guard run.status == 0 else { throw ReferenceFailure(message: String(decoding: run.output, as: UTF8.self)) }
        return run.output
    }

    struct ReferenceFailure: Error, CustomStringConvertible {
        var message: String
        var description: String { "uhdr_reference.py: \(message)" }
    }

    /// An Ultra HDR scene libultrahdr made: `width × height`, a block at 4× SDR white.
    static func scene(width: Int, height: Int, orientation: Int = 1, in directory: URL) async throws -> Data {
        let file = directory.appendingPathComponent("scene-\(width)x\(height)-\(orientation).jpg")
        _ = try await run(["scene", file.path, "\(width)", "\(height)", "\(orientation)"])
        return try Data(contentsOf: file)
    }

    static func facts(_ data: Data, in directory: URL) async throws -> Facts {
        try await facts([data], in: directory)[0]
    }

    /// What libvips finds in each file, in one process.
    static func facts(_ files: [Data], in directory: URL) async throws -> [Facts] {
        var paths: [String] = []
        for data in files {
            let file = directory.appendingPathComponent("facts-\(UUID().uuidString).jpg")
            try data.write(to: file)
            paths.append(file.path)
        }
        let lines = try await run(["facts"] + paths).split(separator: 0x0A)
        return try lines.map { try JSONDecoder().decode(Facts.self, from: Data($0)) }
    }

    /// libvips' HDR rendition of `data`: width, height and linear RGB floats.
    static func hdr(_ data: Data, in directory: URL) async throws -> (width: Int, height: Int, values: [Float]) {
        let file = directory.appendingPathComponent("hdr-\(UUID().uuidString).jpg")
        let out = directory.appendingPathComponent("hdr-\(UUID().uuidString).f32")
        try data.write(to: file)
        let size = String(decoding: try await run(["hdr", file.path, out.path]), as: UTF8.self).split(whereSeparator: \.isWhitespace).compactMap { Int($0) }
        let raw = try Data(contentsOf: out)
        let values = raw.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
        return (size[0], size[1], values)
    }

    /// libvips' own thumbnail of `data` to fit `width × height`, saved as Ultra HDR.
    static func thumbnail(_ data: Data, width: Int, height: Int, in directory: URL) async throws -> Data {
        let file = directory.appendingPathComponent("thumb-in-\(UUID().uuidString).jpg")
        let out = directory.appendingPathComponent("thumb-out-\(UUID().uuidString).jpg")
        try data.write(to: file)
        _ = try await run(["thumbnail", file.path, out.path, "\(width)", "\(height)"])
        return try Data(contentsOf: out)
    }
}
