import Foundation

extension URL {
    /// The URL as text with its password, if it has one, shown as `***`: what messages, logs and
    /// the CLI's outputs print. Over 200 characters it is shortened.
    public var redactedString: String {
        let text = password == nil ? absoluteString : withPassword("***")
        return text.count > 200 ? String(text.prefix(200)) + "…" : text
    }

    /// The URL as text with no password at all (the user name stays): what cache keys hold, so
    /// no password reaches the disk cache's index.
    var stringWithoutPassword: String {
        password == nil ? absoluteString : withPassword(nil)
    }

    private func withPassword(_ replacement: String?) -> String {
        guard var components = URLComponents(url: self, resolvingAgainstBaseURL: false) else {
            // Not parseable as components: drop everything between "//" and "@".
            return absoluteString.replacingOccurrences(of: "//[^/@]*@", with: "//", options: .regularExpression)
        }
        if let replacement { components.percentEncodedPassword = replacement } else { components.password = nil }
        return components.string ?? absoluteString.replacingOccurrences(of: "//[^/@]*@", with: "//", options: .regularExpression)
    }
}
