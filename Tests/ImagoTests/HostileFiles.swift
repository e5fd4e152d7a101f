import Foundation

/// The hostile files in `Tests/Hostile`: inputs that once crashed Imago or made it take gigabytes,
/// and every crash a fuzzer finds (see `Tests/Hostile/README.md`).
enum HostileFiles {
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Hostile")

    static func data(_ name: String) throws -> Data {
        try Data(contentsOf: root.appendingPathComponent(name))
    }

    /// Every file in the folder but its generator and README.
    static func all() throws -> [URL] {
        try FileManager.default.contentsOfDirectory(at: root, includingPropertiesForKeys: nil)
            .filter { !["py", "md"].contains($0.pathExtension) }
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
    }
}
