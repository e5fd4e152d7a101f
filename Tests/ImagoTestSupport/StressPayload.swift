import Foundation

/// Self-describing payloads for the disk cache's crash test: each names its key and version and
/// fills the rest with bytes derived from both, so a reader can tell an intact payload from a torn,
/// mixed or misplaced one without knowing which version was written last.
public enum StressPayload {
    /// The payload for `key` at `version`: "key|version|" then 1–160 KiB of derived bytes.
    public static func make(key: String, version: Int) -> Data {
        var data = Data("\(key)|\(version)|".utf8)
        var generator = SplitMix(seed: UInt64(truncatingIfNeeded: key.utf8.reduce(5381) { $0 &* 33 &+ Int($1) }) ^ UInt64(version))
        let count = 1024 + Int(generator.next() % (159 * 1024))
        data.reserveCapacity(data.count + count)
        for _ in 0..<(count / 8) {
            withUnsafeBytes(of: generator.next()) { data.append(contentsOf: $0) }
        }
        return data
    }

    /// Whether `data` is exactly a payload `make(key:version:)` produces for `key`.
    public static func isIntact(_ data: Data, key: String) -> Bool {
        let parts = data.prefix(200).split(separator: UInt8(ascii: "|"), maxSplits: 2)
        guard parts.count == 3, String(decoding: parts[0], as: UTF8.self) == key,
            let version = Int(String(decoding: parts[1], as: UTF8.self))
        else { return false }
        return data == make(key: key, version: version)
    }
}

/// A small fast deterministic generator (SplitMix64), for payloads and for tests whose random
/// steps must repeat.
public struct SplitMix: Sendable {
    var state: UInt64
    public init(seed: UInt64) { state = seed }
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
