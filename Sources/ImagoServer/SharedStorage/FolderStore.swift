import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A ``SharedStore`` in a folder (`file:///path`), local or on a disk the nodes share (NFS): each
/// object a file, written to a temporary name and renamed, so a reader sees the whole file or
/// none. It removes what has expired itself (``removeExpired(olderThan:)``); object stores leave
/// that to their lifecycle rules.
struct FolderStore: SharedStore {
    let root: URL

    init(root: URL) {
        self.root = root.standardizedFileURL
    }

    var description: String { root.absoluteString }
    var createIsExclusive: Bool { true }

    func read(_ name: String, maxBytes: Int) async throws -> Data? {
        let url = try file(name)
        let handle: FileHandle
        do {
            handle = try FileHandle(forReadingFrom: url)
        } catch let error as CocoaError where error.code == .fileReadNoSuchFile || error.code == .fileNoSuchFile {
            return nil
        }
        defer { try? handle.close() }
        // One byte past the bound tells a file that is too large without reading it all.
        let data = try handle.read(upToCount: maxBytes + 1) ?? Data()
        guard data.count <= maxBytes else { throw ResultStoreFailure("\(name) holds more than \(maxBytes) bytes") }
        return data
    }

    func write(_ name: String, _ data: Data) async throws {
        let url = try file(name)
        let folder = url.deletingLastPathComponent()
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let temporary = folder.appendingPathComponent(".\(url.lastPathComponent).\(UUID().uuidString).tmp")
        guard FileManager.default.createFile(atPath: temporary.path, contents: data, attributes: [.posixPermissions: 0o600]) else {
            throw ResultStoreFailure("\(name) could not be written in \(root.path)")
        }
        do {
            // rename(2) replaces the old file in one step.
            guard rename(temporary.path, url.path) == 0 else { throw ResultStoreFailure("\(name) could not be renamed into place (errno \(errno))") }
        } catch {
            try? FileManager.default.removeItem(at: temporary)
            throw error
        }
    }

    func create(_ name: String, _ data: Data) async throws -> Bool {
        let url = try file(name)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        // O_EXCL: the kernel (and NFS from version 3) lets one creator through.
        let descriptor = open(url.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            if errno == EEXIST { return false }
            throw ResultStoreFailure("\(name) could not be created (errno \(errno))")
        }
        defer { close(descriptor) }
        let written = data.withUnsafeBytes { writeAll(descriptor, $0) }
        guard written == data.count else { throw ResultStoreFailure("\(name) could not be written (errno \(errno))") }
        return true
    }

    func remove(_ name: String) async throws {
        let url = try file(name)
        guard unlink(url.path) == 0 || errno == ENOENT else { throw ResultStoreFailure("\(name) could not be removed (errno \(errno))") }
    }

    /// Removes every object (and temporary file left by a write that died) last written before
    /// `date`; returns how many.
    @discardableResult
    func removeExpired(olderThan date: Date) -> Int {
        guard let walk = FileManager.default.enumerator(at: root, includingPropertiesForKeys: [.contentModificationDateKey, .isRegularFileKey])
        else { return 0 }
        var removed = 0
        for case let url as URL in walk {
            guard let values = try? url.resourceValues(forKeys: [.contentModificationDateKey, .isRegularFileKey]), values.isRegularFile == true,
                let modified = values.contentModificationDate, modified < date
            else { continue }
            if unlink(url.path) == 0 { removed += 1 }
        }
        return removed
    }

    /// The file of `name`: names are the storage's own (hex and slashes), checked anyway so that no
    /// name leaves the folder.
    private func file(_ name: String) throws -> URL {
        let parts = name.split(separator: "/")
        guard !parts.isEmpty, parts.allSatisfy({ $0 != ".." && $0 != "." && !$0.hasPrefix(".") }) else {
            throw ResultStoreFailure("\(name) is not an object name")
        }
        return parts.reduce(root) { $0.appendingPathComponent(String($1)) }
    }
}

/// A store's failure, said without any credential.
struct ResultStoreFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// write(2) of all of `bytes` (a regular file takes them in one call; a signal may cut it short).
private func writeAll(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer) -> Int {
    var done = 0
    while done < bytes.count {
        let written = write(descriptor, bytes.baseAddress! + done, bytes.count - done)
        if written < 0, errno == EINTR { continue }
        guard written > 0 else { return done }
        done += written
    }
    return done
}
