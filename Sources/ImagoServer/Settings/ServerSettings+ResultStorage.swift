import Foundation
import Imago

extension ServerSettings {
    /// The store a fleet's nodes share their made variants through: Imago's URL, imgproxy 4's
    /// cache variables and thumbor's `RESULT_STORAGE` with thumbor-aws's settings, all one fact.
    static let resultStorage: [ServerSetting] = ServerSetting.compound(
        .part(
            "--result-storage", "IMAGO_RESULT_STORAGE", peers: [.same("IMGPROXY_CACHE_USE"), .thumbor("RESULT_STORAGE")],
            "where every node keeps and looks for made variants: file:///path, s3://bucket/prefix or swift://container/prefix (imgproxy's fs, s3 or swift and thumbor's storage modules are read with their settings); default none"
        ),
        .part(
            "--result-storage-bucket", "IMAGO_RESULT_STORAGE_BUCKET",
            peers: [.same("IMGPROXY_CACHE_BUCKET"), .thumbor("AWS_RESULT_STORAGE_BUCKET_NAME"), .thumbor("TC_AWS_RESULT_STORAGE_BUCKET")],
            "the bucket (or Swift container) of a store named by its kind (s3, swift), not by a URL"),
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
            peers: [.same("IMGPROXY_CACHE_S3_ENDPOINT"), .thumbor("AWS_RESULT_STORAGE_S3_ENDPOINT_URL")],
            "the S3 store's server, when it is not --s3-endpoint's (host:port is http)"),
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
            "seconds a read from the store may take before the node makes the variant itself (default 2)")
    ) { configuration, texts, values throws(ServerError) in
        let parts = ServerSettings.resultStorage
        guard let location = texts[0]?.trimmingCharacters(in: .whitespaces), !location.isEmpty else {
            // A peer's part alone is ignored, as the peer ignores it without a store; Imago's is a mistake.
            if let given = parts.dropFirst().first(where: { values[$0.variable] != nil }) {
                throw ServerError(status: 500, "\(given.flag) (\(given.variable)) is set without --result-storage (IMAGO_RESULT_STORAGE)")
            }
            return
        }
        if location.contains("://"), let given = [parts[1], parts[3]].first(where: { values[$0.variable] != nil }) {
            throw ServerError(
                status: 500, "\(given.flag) (\(given.variable)) is for a store named by its kind (fs, s3): the --result-storage URL names its own")
        }
        guard var settings = try ResultStorageSettings.named(location, bucket: texts[1], prefix: texts[2], folder: texts[3]) else { return }
        if let prefix = texts[2] {
            let extra = ResultStorageSettings.plainPrefix(prefix)
            settings.prefix = [settings.prefix, extra].filter { !$0.isEmpty }.joined(separator: "/")
        }
        if case .s3 = settings.location {
            // As the sources' S3, or as the AWS tools read it when --s3 is off; the storage's own endpoint and region win.
            var s3 = configuration.readsS3 ? configuration.s3 : S3Configuration.standard(environment: values)
            if let endpoint = texts[4] {
                guard let url = S3Configuration.endpointURL(endpoint) else {
                    throw ServerSetting.invalid("--result-storage-endpoint", "IMAGO_RESULT_STORAGE_ENDPOINT")
                }
                s3.endpoint = url
            }
            if let region = texts[5] { s3.region = region }
            settings.s3 = s3
        }
        if case .swift = settings.location {
            // As the sources' Swift, or as python-swiftclient reads it (ST_AUTH, ST_USER, ST_KEY) when --swift is off.
            settings.swift = configuration.readsSwift ? configuration.swift : SwiftConfiguration.standard(environment: values)
        }
        if let ttl = texts[6] {
            guard let seconds = Double(ttl), seconds.isFinite, seconds >= 0, seconds < 1e9 else {
                throw ServerSetting.invalid("--result-storage-ttl", "IMAGO_RESULT_STORAGE_TTL")
            }
            settings.timeToLive = seconds > 0 ? .seconds(seconds) : nil
        }
        if let timeout = texts[7] {
            guard let seconds = Double(timeout), seconds.isFinite, seconds > 0, seconds <= 60 else {
                throw ServerSetting.invalid("--result-storage-timeout", "IMAGO_RESULT_STORAGE_TIMEOUT")
            }
            settings.readTimeout = .milliseconds(Int64(seconds * 1_000))
        }
        // A lease stands as long as a make may take, and the write after it.
        settings.leaseDuration = configuration.workTimeout + .seconds(10)
        // A request waits for another node's make no longer than for its own.
        settings.maxLeaseWait = configuration.workTimeout
        configuration.resultStorage = settings
    }
}

extension ResultStorageSettings {
    /// The store `text` names: a URL, imgproxy's kind (`fs`, `s3`) or thumbor's module, with the
    /// `bucket` and `folder` those take; nil for none (thumbor's `no_storage`); throws naming a
    /// store Imago cannot be, or one whose place is not given.
    static func named(_ text: String, bucket: String?, prefix: String?, folder: String?) throws(ServerError) -> ResultStorageSettings? {
        func missing(_ what: String) -> ServerError {
            ServerError(status: 500, "--result-storage (IMAGO_RESULT_STORAGE) \(text) needs \(what)")
        }
        if text.contains("://") {
            guard let settings = ResultStorageSettings(url: text) else {
                throw ServerError(
                    status: 500, "--result-storage (IMAGO_RESULT_STORAGE) is not a file:///path, s3://bucket/prefix or swift://container/prefix URL")
            }
            return settings
        }
        switch text {
        case "fs", "thumbor.result_storages.file_storage":
            // thumbor's default root; imgproxy adds the bucket as a folder below the root.
            let folder = folder ?? (text == "fs" ? nil : "/tmp/thumbor/result_storage")
            guard let folder, folder.hasPrefix("/") else { throw missing("--result-storage-folder (IMGPROXY_CACHE_FS_ROOT), an absolute path") }
            let root = URL(fileURLWithPath: folder)
            return ResultStorageSettings(location: .folder(bucket.map { root.appendingPathComponent(plainPrefix($0)) } ?? root))
        case "s3", "thumbor_aws.result_storage", "tc_aws.result_storages.s3_storage":
            // thumbor-aws's defaults: bucket `thumbor`, root path `/rs`.
            let thumborAWS = text != "s3"
            guard let bucket = bucket ?? (thumborAWS ? "thumbor" : nil), S3Configuration.isBucketName(bucket) else {
                throw missing("--result-storage-bucket, an S3 bucket name")
            }
            return ResultStorageSettings(location: .s3(bucket: bucket), prefix: thumborAWS && prefix == nil ? "rs" : "")
        case "swift":
            guard let bucket, !bucket.isEmpty, bucket.utf8.count <= 256, !bucket.contains("/") else {
                throw missing("--result-storage-bucket, a Swift container")
            }
            return ResultStorageSettings(location: .swift(container: bucket))
        case "thumbor.result_storages.no_storage":
            return nil
        default:
            throw ServerError(
                status: 500,
                "--result-storage (IMAGO_RESULT_STORAGE) \(text.prefix(80)): Imago keeps results in file://, s3:// and swift:// stores (imgproxy's fs, s3 and swift; thumbor's file_storage and thumbor_aws)"
            )
        }
    }
}
