import Crypto
import Foundation
import Imago

/// imgproxy's cookie passthrough (`IMGPROXY_COOKIE_PASSTHROUGH`, `_BASE_URL`, `_PASSTHROUGH_ALL`):
/// the client's cookies sent on with the source's request, as Go's cookie jar would. They are the
/// cookies of the host the client asked (`X-Forwarded-Host`, else `Host`), or of
/// `--cookie-base-url`'s host, so they go only to a source on that host; with
/// `--cookie-passthrough-all`, to every source. Only to http(s) sources, over connections the
/// address policy allows, and never on past a redirect that leaves the origin (the loader drops
/// them). A variant made with cookies is keyed by them and kept nowhere under the URL alone.
struct CookiePassthrough: Sendable {
    let toAll: Bool
    let baseHost: String?

    /// The passthrough `configuration` asks for; nil when it is off.
    init?(_ configuration: ServerConfiguration) {
        guard configuration.passesCookies else { return nil }
        toAll = configuration.passesAllCookies
        baseHost = configuration.cookieBaseURL?.host?.lowercased()
    }

    /// The `Cookie` header to send to `source` for `request`, nil for none: its well-formed
    /// `name=value` pairs.
    func cookie(for request: ServiceRequest, source: URL) -> String? {
        guard let header = request.cookie, ["http", "https"].contains(source.scheme?.lowercased() ?? "") else { return nil }
        if !toAll {
            // Host-only cookies, as Go's jar keeps them for the base URL: the same host, any port.
            let requested = request.host.map { host in String(host.split(separator: ":").first ?? Substring(host)).lowercased() }
            guard let host = baseHost ?? requested, host == source.host?.lowercased() else { return nil }
        }
        let pairs = header.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }.filter(Self.isCookiePair)
        return pairs.isEmpty ? nil : pairs.joined(separator: "; ")
    }

    /// The part of a key that tells one client's cookies from another's: a digest, so no
    /// cookie is in a key.
    static func keyPart(_ cookie: String?) -> String {
        guard let cookie else { return "" }
        return "cookie:" + SHA256.hash(data: Data(cookie.utf8)).prefix(16).map { String(format: "%02x", $0) }.joined()
    }

    /// `name=value` with a token name and a value of cookie octets (RFC 6265), short enough.
    private static func isCookiePair(_ pair: String) -> Bool {
        guard pair.utf8.count <= 4096, let equals = pair.firstIndex(of: "=") else { return false }
        let name = pair[..<equals].utf8, value = pair[pair.index(after: equals)...].utf8
        let separators = Set("()<>@,;:\\\"/[]?={} \t".utf8)
        return !name.isEmpty && name.allSatisfy { $0 > 0x20 && $0 < 0x7F && !separators.contains($0) }
            && value.allSatisfy {
                $0 == 0x21 || (0x23...0x2B).contains($0) || (0x2D...0x3A).contains($0) || (0x3C...0x5B).contains($0) || (0x5D...0x7E).contains($0) || $0 == 0x22
            }
    }
}

extension VariantPlan {
    /// This plan with its source fetched with `cookie` (none: as it is), keyed by it.
    func sending(_ cookie: String?) -> VariantPlan {
        guard let cookie else { return self }
        var plan = self
        plan.sourceHeaders = ["Cookie": cookie]
        plan.key += "\n" + CookiePassthrough.keyPart(cookie)
        return plan
    }
}
