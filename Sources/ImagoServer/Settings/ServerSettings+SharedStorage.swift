import Foundation
import Imago

extension ServerSettings {
    /// The store a fleet's nodes share their made variants through: Imago's URL, imgproxy 4's
    /// cache variables and thumbor's `RESULT_STORAGE` with thumbor-aws's settings, all one fact.
    static let resultStorage: [ServerSetting] =
        sharedStorage(
            SharedStorageNames(
                kind: .result, flag: "--result-storage", variable: "IMAGO_RESULT_STORAGE", setting: \.resultStorage,
                folderModules: ["fs": nil, "thumbor.result_storages.file_storage": "/tmp/thumbor/result_storage"],
                s3Modules: ["s3": nil, "thumbor_aws.result_storage": "rs", "tc_aws.result_storages.s3_storage": "rs"],
                noneModule: "thumbor.result_storages.no_storage",
                folderPart: "--result-storage-folder (IMGPROXY_CACHE_FS_ROOT)",
                accepted: "imgproxy's fs, s3, gcs and swift; thumbor's file_storage and thumbor_aws"),
            .part(
                "--result-storage", "IMAGO_RESULT_STORAGE", peers: [.same("IMGPROXY_CACHE_USE"), .thumbor("RESULT_STORAGE")],
                "where every node keeps and looks for made variants: file:///path, s3://bucket/prefix, gs://bucket/prefix or swift://container/prefix (imgproxy's fs, s3, gcs or swift and thumbor's storage modules are read with their settings); default none"
            ),
            .part(
                "--result-storage-bucket", "IMAGO_RESULT_STORAGE_BUCKET",
                peers: [.same("IMGPROXY_CACHE_BUCKET"), .thumbor("AWS_RESULT_STORAGE_BUCKET_NAME"), .thumbor("TC_AWS_RESULT_STORAGE_BUCKET")],
                "the bucket (or Swift container) of a store named by its kind (s3, gcs, swift), not by a URL"),
            .part(
                "--result-storage-prefix", "IMAGO_RESULT_STORAGE_PREFIX",
                peers: [.same("IMGPROXY_CACHE_PATH_PREFIX"), .thumbor("AWS_RESULT_STORAGE_ROOT_PATH"), .thumbor("TC_AWS_RESULT_STORAGE_ROOT_PATH")],
                "what every stored object's name starts with, after the URL's own path"),
            .part(
                "--result-storage-folder", "IMAGO_RESULT_STORAGE_FOLDER",
                peers: [.same("IMGPROXY_CACHE_FS_ROOT"), .thumbor("RESULT_STORAGE_FILE_STORAGE_ROOT_PATH")],
                "the folder of a store named by its kind (fs, thumbor's file_storage)"),
            .part(
                "--result-storage-endpoint", "IMAGO_RESULT_STORAGE_ENDPOINT",
                peers: [.same("IMGPROXY_CACHE_S3_ENDPOINT"), .same("IMGPROXY_CACHE_GCS_ENDPOINT"), .thumbor("AWS_RESULT_STORAGE_S3_ENDPOINT_URL")],
                "the S3 or GCS store's server, when it is not --s3-endpoint's or --gcs-endpoint's (host:port is http)"),
            .part(
                "--result-storage-region", "IMAGO_RESULT_STORAGE_REGION",
                peers: [.same("IMGPROXY_CACHE_S3_REGION"), .thumbor("AWS_RESULT_STORAGE_REGION_NAME")],
                "the S3 store's region, when it is not --s3-region's"),
            .part(
                "--result-storage-ttl", "IMAGO_RESULT_STORAGE_TTL", peers: [.thumbor("RESULT_STORAGE_EXPIRATION_SECONDS")],
                "seconds a stored variant stands before it is made again; 0 (the default): until the store removes it (a folder store removes what has expired)"
            ),
            .part(
                "--result-storage-timeout", "IMAGO_RESULT_STORAGE_TIMEOUT",
                "seconds a read from the store may take before the node makes the variant itself (default 2)"),
            .part(
                "--result-storage-key", "IMAGO_RESULT_STORAGE_KEY", peers: [.same("IMGPROXY_CACHE_GCS_KEY")],
                "the GCS store's service account key (its JSON or its file's path), when it is not --gcs-key's")
        )
        + [
            .boolean(
                "--result-storage-unsafe", "IMAGO_RESULT_STORAGE_UNSAFE", peers: [.thumbor("RESULT_STORAGE_STORES_UNSAFE")],
                "thumbor's /unsafe/ URLs read and write the result store too (thumbor's own default is false)", showsTrueFalse: true,
                \.resultStorageStoresUnsafe)
        ]

    /// The store a fleet's nodes share the originals they fetch through: Imago's URL, and thumbor's
    /// `STORAGE` with thumbor-aws's settings.
    static let sourceStorage: [ServerSetting] = sharedStorage(
        SharedStorageNames(
            kind: .source, flag: "--source-storage", variable: "IMAGO_SOURCE_STORAGE", setting: \.sourceStorage,
            folderModules: ["thumbor.storages.file_storage": "/tmp/thumbor/storage"],
            s3Modules: ["thumbor_aws.storage": "st", "tc_aws.storages.s3_storage": "st"],
            noneModule: "thumbor.storages.no_storage",
            folderPart: "--source-storage-folder (thumbor's FILE_STORAGE_ROOT_PATH)",
            accepted: "thumbor's file_storage and thumbor_aws.storage"),
        .part(
            "--source-storage", "IMAGO_SOURCE_STORAGE", peers: [.thumbor("STORAGE")],
            "where every node keeps and looks for the originals it fetches over http(s), with their validators: file:///path, s3://bucket/prefix, gs://bucket/prefix or swift://container/prefix (thumbor's storage modules are read with their settings); default none"
        ),
        .part(
            "--source-storage-bucket", "IMAGO_SOURCE_STORAGE_BUCKET",
            peers: [.thumbor("AWS_STORAGE_BUCKET_NAME"), .thumbor("TC_AWS_STORAGE_BUCKET")],
            "the bucket of a store named by thumbor's module, not by a URL"),
        .part(
            "--source-storage-prefix", "IMAGO_SOURCE_STORAGE_PREFIX",
            peers: [.thumbor("AWS_STORAGE_ROOT_PATH"), .thumbor("TC_AWS_STORAGE_ROOT_PATH")],
            "what every stored original's name starts with, after the URL's own path"),
        .part(
            "--source-storage-folder", "IMAGO_SOURCE_STORAGE_FOLDER", peers: [.thumbor("FILE_STORAGE_ROOT_PATH")],
            "the folder of a store named by thumbor's file_storage"),
        .part(
            "--source-storage-endpoint", "IMAGO_SOURCE_STORAGE_ENDPOINT", peers: [.thumbor("AWS_STORAGE_S3_ENDPOINT_URL")],
            "the S3 or GCS store's server, when it is not --s3-endpoint's or --gcs-endpoint's (host:port is http)"),
        .part(
            "--source-storage-region", "IMAGO_SOURCE_STORAGE_REGION", peers: [.thumbor("AWS_STORAGE_REGION_NAME")],
            "the S3 store's region, when it is not --s3-region's"),
        .part(
            "--source-storage-ttl", "IMAGO_SOURCE_STORAGE_TTL", peers: [.thumbor("STORAGE_EXPIRATION_SECONDS")],
            "seconds a stored original stands before it is fetched again, fresh or not; 0 (the default): as long as HTTP caching and the store allow"
        ),
        .part(
            "--source-storage-timeout", "IMAGO_SOURCE_STORAGE_TIMEOUT",
            "seconds a read from the store may take before the node fetches from the origin itself (default 2)"),
        .part(
            "--source-storage-key", "IMAGO_SOURCE_STORAGE_KEY",
            "the GCS store's service account key (its JSON or its file's path), when it is not --gcs-key's")
    )

    /// A shared store's nine parts (its URL or kind, bucket, prefix, folder, S3 or GCS endpoint, S3
    /// region, time to live, read timeout, GCS key), read into `names.setting` as one fact.
    private static func sharedStorage(_ names: SharedStorageNames, _ parts: ServerSetting...) -> [ServerSetting] {
        let named = parts.map { (flag: $0.flag, variable: $0.variable) }
        return ServerSetting.compound(parts: parts) { configuration, texts, values throws(ServerError) in
            let whole = "\(names.flag) (\(names.variable))"
            guard let location = texts[0]?.trimmingCharacters(in: .whitespaces), !location.isEmpty else {
                // A peer's part alone is ignored, as the peer ignores it without a store; Imago's is a mistake.
                if let given = named.dropFirst().first(where: { values[$0.variable] != nil }) {
                    throw ServerError(status: 500, "\(given.flag) (\(given.variable)) is set without \(whole)")
                }
                return
            }
            if location.contains("://"), let given = [named[1], named[3]].first(where: { values[$0.variable] != nil }) {
                throw ServerError(status: 500, "\(given.flag) (\(given.variable)) is for a store named by its kind: the \(names.flag) URL names its own")
            }
            guard var settings = try names.settings(location, bucket: texts[1], prefix: texts[2], folder: texts[3]) else { return }
            if let prefix = texts[2] {
                let extra = SharedStorageSettings.plainPrefix(prefix)
                settings.prefix = [settings.prefix, extra].filter { !$0.isEmpty }.joined(separator: "/")
            }
            if case .s3 = settings.location {
                // As the sources' S3, or as the AWS tools read it when --s3 is off; the storage's own endpoint and region win.
                var s3 = configuration.readsS3 ? configuration.s3 : S3Configuration.standard(environment: values)
                if let endpoint = texts[4] {
                    guard let url = S3Configuration.endpointURL(endpoint) else { throw ServerSetting.invalid(named[4].flag, named[4].variable) }
                    s3.endpoint = url
                }
                if let region = texts[5] { s3.region = region }
                // Amazon S3 itself takes no unsigned write: a store there without a key could never hold anything.
                if s3.endpoint == nil, s3.credentials == nil {
                    throw ServerError(
                        status: 500, "\(whole) \(settings.description) needs a key to write with: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY")
                }
                settings.s3 = s3
            }
            if case .gcs = settings.location {
                // As the sources' GCS, or as Google's libraries read it when --gcs is off; the storage's own endpoint and key win.
                var gcs = configuration.readsGCS ? configuration.gcs : GCSConfiguration.standard(environment: values)
                gcs.buckets = BucketRule()
                if let endpoint = texts[4] {
                    guard let url = S3Configuration.endpointURL(endpoint) else { throw ServerSetting.invalid(named[4].flag, named[4].variable) }
                    gcs.endpoint = url
                }
                if let key = texts[8] { gcs.account = try ServerSetting.gcsAccount(key, named[8].flag, named[8].variable) }
                if gcs.account == nil, gcs.endpoint == GCSConfiguration.googleEndpoint {
                    throw ServerError(
                        status: 500,
                        "\(whole) \(settings.description) needs a service account to write with: \(named[8].flag) (\(named[8].variable)), --gcs-key or GOOGLE_APPLICATION_CREDENTIALS"
                    )
                }
                settings.gcs = gcs
            }
            if case .swift = settings.location {
                // As the sources' Swift, or as python-swiftclient reads it (ST_AUTH, ST_USER, ST_KEY) when --swift is off.
                settings.swift = configuration.readsSwift ? configuration.swift : SwiftConfiguration.standard(environment: values)
            }
            if let ttl = texts[6] {
                guard let seconds = Double(ttl), seconds.isFinite, seconds >= 0, seconds < 1e9 else {
                    throw ServerSetting.invalid(named[6].flag, named[6].variable)
                }
                settings.timeToLive = seconds > 0 ? .seconds(seconds) : nil
            }
            if let timeout = texts[7] {
                guard let seconds = Double(timeout), seconds.isFinite, seconds > 0, seconds <= 60 else {
                    throw ServerSetting.invalid(named[7].flag, named[7].variable)
                }
                settings.readTimeout = .milliseconds(Int64(seconds * 1_000))
            }
            // A lease stands as long as a make may take, and the write after it.
            settings.leaseDuration = configuration.workTimeout + .seconds(10)
            // A request waits for another node's make no longer than for its own.
            settings.maxLeaseWait = configuration.workTimeout
            configuration[keyPath: names.setting] = settings
        }
    }
}

/// How one kind of shared store is named: Imago's setting, and the peers' modules that mean a
/// folder, an S3 bucket or no store.
struct SharedStorageNames: Sendable {
    var kind: StoredObject.Kind
    var flag: String
    var variable: String
    var setting: WritableKeyPath<ServerConfiguration, SharedStorageSettings?> & Sendable
    /// Names that mean a folder, with the folder used when none is given (nil: it must be).
    var folderModules: [String: String?]
    /// Names that mean an S3 bucket, with the prefix used when none is given (thumbor-aws's
    /// `/rs` and `/st`; nil: none). Any but imgproxy's `s3` take thumbor-aws's bucket `thumbor`.
    var s3Modules: [String: String?]
    /// thumbor's module for no store.
    var noneModule: String
    /// The folder's setting, as an error names it.
    var folderPart: String
    /// What the error for an unknown name lists.
    var accepted: String

    /// The store `text` names: a URL, or a peer's kind with the `bucket` and `folder` it takes; nil
    /// for none (thumbor's `no_storage`); throws naming a store Imago cannot be, or one whose place
    /// is not given.
    func settings(_ text: String, bucket: String?, prefix: String?, folder: String?) throws(ServerError) -> SharedStorageSettings? {
        let whole = "\(flag) (\(variable))"
        func missing(_ what: String) -> ServerError { ServerError(status: 500, "\(whole) \(text) needs \(what)") }
        if text.contains("://") {
            guard let settings = SharedStorageSettings(url: text) else {
                throw ServerError(status: 500, "\(whole) is not a file:///path, s3://bucket/prefix, gs://bucket/prefix or swift://container/prefix URL")
            }
            return settings
        }
        if let fallback = folderModules[text] {
            // imgproxy adds the bucket as a folder below the root.
            guard let folder = folder ?? fallback, folder.hasPrefix("/") else { throw missing("\(folderPart), an absolute path") }
            let root = URL(fileURLWithPath: folder)
            return SharedStorageSettings(location: .folder(bucket.map { root.appendingPathComponent(SharedStorageSettings.plainPrefix($0)) } ?? root))
        }
        if let defaultPrefix = s3Modules[text] {
            let thumborAWS = text != "s3"
            guard let bucket = bucket ?? (thumborAWS ? "thumbor" : nil), S3Configuration.isBucketName(bucket) else {
                throw missing("\(flag)-bucket, an S3 bucket name")
            }
            return SharedStorageSettings(location: .s3(bucket: bucket), prefix: prefix == nil ? defaultPrefix ?? "" : "")
        }
        if text == "gcs", kind == .result {
            guard let bucket, S3Configuration.isBucketName(bucket) else { throw missing("\(flag)-bucket, a GCS bucket name") }
            return SharedStorageSettings(location: .gcs(bucket: bucket))
        }
        if text == "swift", kind == .result {
            guard let bucket, !bucket.isEmpty, bucket.utf8.count <= 256, !bucket.contains("/") else { throw missing("\(flag)-bucket, a Swift container") }
            return SharedStorageSettings(location: .swift(container: bucket))
        }
        if text == noneModule { return nil }
        throw ServerError(status: 500, "\(whole) \(text.prefix(80)): Imago keeps them in file://, s3://, gs:// and swift:// stores (\(accepted))")
    }
}
