// Built with the `HTTPClientLoader` trait (on by default): the S3 calls go over Imago's HTTP client.
#if HTTPClientLoader

    import Foundation
    import Imago

    /// A ``SharedStore`` in an S3 bucket (`s3://bucket/prefix`), AWS's or any server with its API,
    /// with the endpoint, key and role of ``ServerConfiguration/s3`` unless the storage's own
    /// settings name others. A `PUT` replaces an object whole; expiry is the bucket's lifecycle rule.
    struct S3Store: SharedStore {
        let bucket: String
        let s3: S3DataLoader
        let call: ObjectStoreCall

        var description: String { "s3://\(bucket)" }
        var createIsExclusive: Bool { true }

        func read(_ name: String, maxBytes: Int) async throws -> Data? {
            try await s3.object(bucket: bucket, key: name, maxBytes: maxBytes, call)
        }

        func write(_ name: String, _ data: Data) async throws {
            try await s3.putObject(bucket: bucket, key: name, data: data, call)
        }

        func create(_ name: String, _ data: Data) async throws -> Bool {
            try await s3.putObject(bucket: bucket, key: name, data: data, onlyIfAbsent: true, call)
        }

        func remove(_ name: String) async throws {
            try await s3.deleteObject(bucket: bucket, key: name, call)
        }
    }

#endif
