// Built with the `HTTPClientLoader` trait (on by default): the GCS calls go over Imago's HTTP client.
#if HTTPClientLoader

    import Foundation
    import Imago

    /// A ``SharedStore`` in a Google Cloud Storage bucket (`gs://bucket/prefix`), with the endpoint
    /// and service account of ``ServerConfiguration/gcs`` (the read-write scope). A media upload
    /// replaces an object whole; a lease is an upload with `ifGenerationMatch=0`, which GCS lets
    /// through once; expiry is the bucket's lifecycle rule.
    struct GCSStore: SharedStore {
        let bucket: String
        let gcs: GCSDataLoader
        let call: ObjectStoreCall

        var description: String { "gs://\(bucket)" }
        var createIsExclusive: Bool { true }

        func read(_ name: String, maxBytes: Int) async throws -> Data? {
            try await gcs.object(bucket: bucket, name: name, maxBytes: maxBytes, call)
        }

        func write(_ name: String, _ data: Data) async throws {
            try await gcs.putObject(bucket: bucket, name: name, data: data, call)
        }

        func create(_ name: String, _ data: Data) async throws -> Bool {
            try await gcs.putObject(bucket: bucket, name: name, data: data, onlyIfAbsent: true, call)
        }

        func remove(_ name: String) async throws {
            try await gcs.deleteObject(bucket: bucket, name: name, call)
        }
    }

#endif
