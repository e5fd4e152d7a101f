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

    /// Whether `signature` signs `signedPart`, compared in constant time. A signature must be
    /// thumbor's 28 characters of URL-safe base64.
    public func verify(_ signature: String, for signedPart: String) -> Bool {
        guard let key, signature.utf8.count == 28 else { return false }
        let base64 = signature.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        guard let given = Data(base64Encoded: base64) else { return false }
        return HMAC<Insecure.SHA1>.isValidAuthenticationCode(given, authenticating: Array(signedPart.utf8), using: SymmetricKey(data: key))
    }
}
