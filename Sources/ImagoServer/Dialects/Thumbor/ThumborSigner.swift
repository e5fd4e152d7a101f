import Crypto
import Foundation

/// thumbor's URL signatures (libthumbor's `CryptoURL`, thumbor's `url_signers.base64_hmac_sha1`):
/// HMAC-SHA1 keyed by the security key over the path after the signature, in URL-safe base64
/// with its padding.
public struct ThumborSigner: Sendable {
    /// The security key's bytes (its UTF-8, as thumbor encodes `SECURITY_KEY`); nil when no key is
    /// set, when only `unsafe/` URLs can be answered.
    public let key: [UInt8]?
    /// Whether `unsafe/` URLs are answered (thumbor's `ALLOW_UNSAFE_URL`).
    public let allowsUnsafe: Bool

    /// A signer with `key`; `allowsUnsafe` defaults to true without a key (nothing else could be
    /// answered) and false with one, so a signed deployment is not open by a forgotten setting.
    public init(key: String?, allowsUnsafe: Bool? = nil) {
        let key = key.flatMap { $0.isEmpty ? nil : Array($0.utf8) }
        self.key = key
        self.allowsUnsafe = allowsUnsafe ?? (key == nil)
    }

    /// The signature of `signedPart` (the path after `/SIGNATURE/`), as thumbor writes it.
    public static func signature(for signedPart: String, key: String) -> String {
        let code = HMAC<Insecure.SHA1>.authenticationCode(for: Array(signedPart.utf8), using: SymmetricKey(data: Array(key.utf8)))
        return Data(code).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
    }

    /// Whether `signature` signs `signedPart`: thumbor compares the text, so it is compared as
    /// text (a different unused bit in the last base64 character is a different signature), in
    /// constant time.
    public func verify(_ signature: String, for signedPart: String) -> Bool {
        guard let key, signature.utf8.count == 28 else { return false }
        let code = HMAC<Insecure.SHA1>.authenticationCode(for: Array(signedPart.utf8), using: SymmetricKey(data: key))
        let expected = Data(code).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        var difference: UInt8 = 0
        for (a, b) in zip(expected.utf8, signature.utf8) { difference |= a ^ b }
        return difference == 0 && expected.utf8.count == signature.utf8.count
    }
}
