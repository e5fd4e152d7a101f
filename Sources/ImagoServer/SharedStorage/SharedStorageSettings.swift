import Foundation
import Imago

/// Where a fleet keeps its made variants (`--result-storage`) and how long they stand.
public struct SharedStorageSettings: Sendable {
    /// The kind of store and where in it.
    public enum Location: Sendable, Equatable {
        /// A folder (`file:///path`), on a disk the nodes share or the node's own.
        case folder(URL)
        /// An S3 bucket (`s3://bucket/prefix`).
        case s3(bucket: String)
        /// A Google Cloud Storage bucket (`gs://bucket/prefix`).
        case gcs(bucket: String)
        /// An OpenStack Swift container (`swift://container/prefix`).
        case swift(container: String)
    }

    /// The store.
    public var location: Location
    /// What every object's name starts with (`variants/`), without a leading slash.
    public var prefix: String
    /// The S3 store's endpoint, region and key; nil: those of ``ServerConfiguration/s3``.
    public var s3: S3Configuration?
    /// The GCS store's endpoint and service account; nil: those of ``ServerConfiguration/gcs``.
    public var gcs: GCSConfiguration?
    /// The Swift store's auth URL, user and key; nil: those of ``ServerConfiguration/swift``.
    public var swift: SwiftConfiguration?
    /// A variant stored longer ago is made again (thumbor's `RESULT_STORAGE_EXPIRATION_SECONDS`);
    /// nil: it stands until the store's own expiry removes it.
    public var timeToLive: Duration?
    /// How long a read may take before the node makes the variant itself: the store is a cache,
    /// never a dependency.
    public var readTimeout: Duration = .seconds(2)
    /// How long a lease (one node making a variant for the fleet) stands: others wait for the
    /// variant that long at most, and a lease whose holder died is taken over after it. The
    /// service sets it from its work timeout unless it is set.
    public var leaseDuration: Duration = .seconds(40)
    /// The largest object read or written: a store cannot make a node hold more.
    public var maxObjectBytes = 16 << 20
    /// Reads from the store at once (others wait their turn): with ``maxObjectBytes``, the memory
    /// reads may hold (128 MB by default), bounded before a byte arrives.
    public var concurrentReads = 8
    /// How long a request waits for a variant another node is making (its lease) before it makes
    /// it itself; the service's work timeout when read from the settings.
    public var maxLeaseWait: Duration = .seconds(30)
    /// Bytes of written variants waiting to be sent to the store at most; past them a variant is
    /// not stored (and counted), so a slow store cannot fill the node's memory.
    public var maxPendingBytes = 64 << 20

    /// A store at `location` under `prefix`.
    public init(location: Location, prefix: String = "") {
        self.location = location
        self.prefix = prefix
    }

    /// The settings a `--result-storage` URL names: `file:///path`, `s3://bucket[/prefix]`,
    /// `gs://bucket[/prefix]`, `swift://container[/prefix]`; nil for anything else.
    public init?(url text: String) {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased() else { return nil }
        let path = url.path(percentEncoded: false)
        switch scheme {
        case "file":
            guard url.host(percentEncoded: false).map({ $0.isEmpty || $0 == "localhost" }) ?? true, path.hasPrefix("/"), path.count > 1 else { return nil }
            self.init(location: .folder(URL(fileURLWithPath: path)))
        case "s3", "gs":
            guard let bucket = url.host(percentEncoded: false), S3Configuration.isBucketName(bucket), url.query == nil, url.user == nil else { return nil }
            self.init(location: scheme == "s3" ? .s3(bucket: bucket) : .gcs(bucket: bucket), prefix: Self.plainPrefix(path))
        case "swift":
            guard let container = url.host(percentEncoded: false), !container.isEmpty, container.utf8.count <= 256, url.query == nil, url.user == nil
            else { return nil }
            self.init(location: .swift(container: container), prefix: Self.plainPrefix(path))
        default:
            return nil
        }
    }

    /// `path` without its slashes at either end, its `.` and `..` parts left out.
    static func plainPrefix(_ path: String) -> String {
        path.split(separator: "/").filter { $0 != "." && $0 != ".." }.joined(separator: "/")
    }

    /// The store as logs name it.
    public var description: String {
        switch location {
        case .folder(let url): url.absoluteString
        case .s3(let bucket): "s3://\(bucket)" + (prefix.isEmpty ? "" : "/" + prefix)
        case .gcs(let bucket): "gs://\(bucket)" + (prefix.isEmpty ? "" : "/" + prefix)
        case .swift(let container): "swift://\(container)" + (prefix.isEmpty ? "" : "/" + prefix)
        }
    }
}
