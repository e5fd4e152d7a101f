import Foundation

@testable import Imago

/// Hostile text through what the object-store and proxy loaders parse: the stores' error
/// documents, the AWS shared credentials file, a GCS service-account key (and the JWT its key
/// signs), s3://, gs:// and swift:// URLs taken apart and made into request URLs, the proxy variables with
/// no_proxy, and a proxy's answer to CONNECT. The first byte picks the parser. Secrets read from
/// the input must never show in a description.
enum ObjectStoreFeed {
    static func run(_ data: Data) {
        guard let first = data.first else { return }
        let body = data.dropFirst()
        let text = String(decoding: body, as: UTF8.self)
        switch first % 7 {
        case 0:
            _ = ObjectStoreErrorDocument.s3(status: 403, body: Data(body))
            _ = ObjectStoreErrorDocument.gcs(status: 404, body: Data(body))
            _ = ObjectStoreErrorDocument.swift(status: 404, body: Data(body))
        case 1:
            for profile in ["default", "other"] {
                guard let credentials = AWSCredentials.sharedFile(text, profile: profile) else { continue }
                if credentials.secretAccessKey.count >= 8 { precondition(!credentials.description.contains(credentials.secretAccessKey)) }
            }
        case 2:
            guard let account = GCSServiceAccount(json: Data(body)) else { return }
            if account.privateKeyPEM.count >= 8 { precondition(!account.description.contains(account.privateKeyPEM)) }
            _ = try? GCSAccessToken.assertion(account, issuedAt: Date(timeIntervalSince1970: 1_800_000_000))
        case 3:
            guard let url = URL(string: text) else { return }
            let endpoint = URL(string: "http://127.0.0.1:9000")
            if let object = try? S3Object(url) {
                // httpURL force-unwraps the URL it builds: any object that parsed must make one.
                for usesPathStyle in [true, false] {
                    _ = S3Configuration(endpoint: endpoint, usesPathStyle: usesPathStyle).httpURL(for: object, region: "us-west-1")
                }
                _ = S3Configuration().httpURL(for: object, region: "eu-central-1")
            }
            if let parts = try? GCSDataLoader.parts(of: url) {
                _ = GCSDataLoader(GCSConfiguration()).mediaURL(bucket: parts.bucket, object: parts.object, generation: parts.generation)
            }
            if let parts = try? SwiftDataLoader.parts(of: url) {
                // objectURL force-unwraps the URL it builds: any parts that parsed must make one.
                _ = SwiftDataLoader.objectURL(storage: URL(string: "http://127.0.0.1:8080/v1/AUTH_test")!, container: parts.container, object: parts.object)
            }
        case 4:
            // Lines: a proxy URL, a no_proxy list, then URLs to route.
            let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            guard lines.count >= 2 else { return }
            _ = HTTPProxy(url: lines[0])
            let settings = ProxySettings.environment(["http_proxy": lines[0], "https_proxy": lines[0], "no_proxy": lines[1]])
            for line in lines.dropFirst(2).prefix(8) {
                guard let url = URL(string: line) else { continue }
                _ = settings.proxy(for: url)
            }
        case 5:
            // A storage URL a hostile auth server answers, then a swift:// URL.
            let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            guard lines.count >= 2, let storage = URL(string: lines[0]), let url = URL(string: lines[1]),
                let parts = try? SwiftDataLoader.parts(of: url)
            else { return }
            _ = SwiftDataLoader.objectURL(storage: storage, container: parts.container, object: parts.object)
        default:
            _ = ProxyTunnelHandler.status(text)
        }
    }
}
