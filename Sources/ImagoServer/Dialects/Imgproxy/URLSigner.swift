import Crypto
import Foundation

/// imgproxy's URL signatures: HMAC-SHA256 keyed by `key` over `salt` followed by the path after
/// the signature, in URL-safe base64 without padding. Several key and salt pairs may be
/// configured, so keys can be rotated: a signature made with any of them verifies.
public struct URLSigner: Sendable {
    /// One key and its salt, as bytes.
    public struct Pair: Sendable {
        /// The HMAC key.
        public var key: [UInt8]
        /// The salt put before the path.
        public var salt: [UInt8]

        /// Makes a pair.
        public init(key: [UInt8], salt: [UInt8]) {
            self.key = key
            self.salt = salt
        }
    }

    /// The pairs a signature is checked against; any of them verifies it.
    public let pairs: [Pair]
    /// The bytes of the HMAC a signature carries (imgproxy's `IMGPROXY_SIGNATURE_SIZE`, 1–32):
    /// a shorter signature is the code's first bytes. Default 32.
    public var signatureSize = 32

    /// A signer with `pairs`; none turns signing off (every signature passes).
    public init(pairs: [Pair]) {
        self.pairs = pairs
    }

    /// Pairs from hex text, as in `IMAGO_KEY`/`IMAGO_SALT`: keys and salts matched by position.
    /// Throws unless each is even-length hex and there are as many salts as keys.
    public init(hexKeys: [String], hexSalts: [String]) throws(ServerError) {
        guard hexKeys.count == hexSalts.count else { throw ServerError(status: 500, "as many salts as keys are needed") }
        var pairs: [Pair] = []
        for (key, salt) in zip(hexKeys, hexSalts) {
            guard let key = Self.bytes(hex: key), let salt = Self.bytes(hex: salt), !key.isEmpty else {
                throw ServerError(status: 500, "keys and salts must be hex, and keys not empty")
            }
            pairs.append(Pair(key: key, salt: salt))
        }
        self.init(pairs: pairs)
    }

    /// Whether signatures are checked.
    public var isEnabled: Bool { !pairs.isEmpty }

    /// The signature of `signedPart` (the path after the signature, from its `/`) with `pair`,
    /// its HMAC cut to `size` bytes.
    public static func signature(for signedPart: String, pair: Pair, size: Int = 32) -> String {
        let code = HMAC<SHA256>.authenticationCode(for: pair.salt + Array(signedPart.utf8), using: SymmetricKey(data: pair.key))
        return Data(Array(code).prefix(max(1, size))).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// Whether `signature` signs `signedPart` with one of the pairs, compared in constant time.
    /// True for anything when signing is off.
    public func verify(_ signature: String, for signedPart: String) -> Bool {
        guard isEnabled else { return true }
        guard let given = Self.base64URLBytes(signature) else { return false }
        let message = Array(signedPart.utf8)
        let size = min(max(signatureSize, 1), 32)
        guard given.count == size else { return false }
        var valid = false
        // Every pair is tried, and every byte compared, so the time does not say which one matched.
        for pair in pairs {
            let code = Array(HMAC<SHA256>.authenticationCode(for: pair.salt + message, using: SymmetricKey(data: pair.key)))
            valid = ConstantTime.equal(Array(code.prefix(size)), given) || valid
        }
        return valid
    }

    static func bytes(hex: String) -> [UInt8]? {
        let digits = Array(hex.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let high = nibble(digits[index]), let low = nibble(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
        }
        return bytes
    }

    private static func nibble(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    private static func base64URLBytes(_ text: String) -> [UInt8]? {
        guard text.utf8.count <= 128 else { return nil }
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        return Data(base64Encoded: base64).map { [UInt8]($0) }
    }
}
