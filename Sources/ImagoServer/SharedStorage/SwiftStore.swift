// Built with the `HTTPClientLoader` trait (on by default): the Swift calls go over Imago's HTTP client.
#if HTTPClientLoader

    import Foundation
    import Imago

    /// A ``SharedStore`` in an OpenStack Swift container (`swift://container/prefix`), signed in
    /// as ``ServerConfiguration/swift`` (or python-swiftclient's `ST_AUTH`, `ST_USER`, `ST_KEY`).
    /// A `PUT` replaces an object whole; a lease is a `PUT` with `If-None-Match: *`; expiry is
    /// the operator's (`X-Delete-After` on the container's objects, or the swift-object-expirer).
    struct SwiftStore: SharedStore {
        let container: String
        let swift: SwiftDataLoader
        let call: ObjectStoreCall

        var description: String { "swift://\(container)" }
        var createIsExclusive: Bool { false }

        func read(_ name: String, maxBytes: Int) async throws -> Data? {
            try await swift.object(container: container, object: name, maxBytes: maxBytes, call)
        }

        func write(_ name: String, _ data: Data) async throws {
            try await swift.putObject(container: container, object: name, data: data, call)
        }

        func create(_ name: String, _ data: Data) async throws -> Bool {
            try await swift.putObject(container: container, object: name, data: data, onlyIfAbsent: true, call)
        }

        func remove(_ name: String) async throws {
            try await swift.deleteObject(container: container, object: name, call)
        }
    }

#endif
