import Foundation

/// Certificate authorities trusted for https besides the system's: PEM files of CA certificates,
/// and directories of them named by their subject hash (OpenSSL's `c_rehash` layout), as
/// `SSL_CERT_FILE` and `SSL_CERT_DIR` name them for OpenSSL's tools. A private CA in front of the
/// image origins (a corporate TLS-inspecting proxy, an internal object store) is added so,
/// without turning verification off. Used by Imago's own HTTP client; URLSession and a caller's
/// AsyncHTTPClient have their own.
public struct TrustRoots: Sendable, Hashable {
    /// The files and directories, in order.
    public var paths: [String]

    /// Roots from these files and directories.
    public init(paths: [String] = []) {
        self.paths = paths
    }

    /// No roots beyond the system's.
    public static let none = TrustRoots()

    /// `SSL_CERT_FILE` (one file) and `SSL_CERT_DIR` (directories separated by colons).
    public static func environment(_ environment: [String: String] = ProcessInfo.processInfo.environment) -> TrustRoots {
        var paths: [String] = []
        if let file = environment["SSL_CERT_FILE"], !file.isEmpty { paths.append(file) }
        if let directories = environment["SSL_CERT_DIR"] { paths += directories.split(separator: ":").map(String.init).filter { !$0.isEmpty } }
        return TrustRoots(paths: paths)
    }

    /// The paths that cannot be read (missing, or neither a readable file nor a directory): a
    /// program checks them when it starts, so a mistyped path is an error at once, not a TLS
    /// failure on every https source later.
    public var unreadablePaths: [String] {
        paths.filter { path in
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { return true }
            return isDirectory.boolValue ? false : !FileManager.default.isReadableFile(atPath: path)
        }
    }
}
