import ArgumentParser
import Foundation
import Imago

/// Command-line inputs as URLs: a URL with a scheme as given, a folder as the images found in it
/// (recursively, sorted), a file as its file URL; anything else is that input's error.
enum InputList {
    /// The files a folder gives: every extension of the library's format table.
    static var imageExtensions: Set<String> { ImageFormat.readableExtensions }

    static func expand(_ inputs: [String]) throws -> [Result<URL, InvalidInput>] {
        var items: [Result<URL, InvalidInput>] = []
        for text in inputs {
            if let url = URL(string: text), let scheme = url.scheme, scheme.count > 1 {
                items.append(.success(url))
                continue
            }
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: text, isDirectory: &isDirectory) else {
                items.append(.failure(InvalidInput(text: text, reason: "no such file, folder or URL: \(text)")))
                continue
            }
            guard isDirectory.boolValue else {
                items.append(.success(URL(fileURLWithPath: text)))
                continue
            }
            guard let found = images(inFolder: text) else {
                items.append(.failure(InvalidInput(text: text, reason: "cannot read the folder \(text)")))
                continue
            }
            items += found.map { .success($0) }
        }
        return items
    }

    /// The image files under `folder`, recursively, sorted by path; nil when it cannot be read.
    static func images(inFolder folder: String) -> [URL]? {
        guard let walker = FileManager.default.enumerator(at: URL(fileURLWithPath: folder), includingPropertiesForKeys: nil) else { return nil }
        var found: [URL] = []
        for case let file as URL in walker where imageExtensions.contains(file.pathExtension.lowercased()) {
            found.append(file)
        }
        return found.sorted { $0.path < $1.path }
    }
}

extension PixelSize {
    /// `512x384` as a size; a usage error naming `option` otherwise.
    init(parsing text: String, option: String) throws {
        let parts = text.lowercased().split(separator: "x").map { Int($0) }
        guard parts.count == 2, let width = parts[0], let height = parts[1], (1...65_535).contains(width), (1...65_535).contains(height) else {
            throw ValidationError("\(option) wants WIDTHxHEIGHT in pixels from 1 to 65535, such as 512x512, not '\(text)'")
        }
        self.init(width: width, height: height)
    }
}
