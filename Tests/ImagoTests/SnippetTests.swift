import Foundation
import Testing

/// Every ```swift block of the README and of the DocC articles is code that compiles: it must be,
/// word for word, one of the regions marked `// snippet: NAME` … `// end snippet` in
/// Examples/Snippets (a target `make test` builds) or in Examples/Install/Package.swift (a
/// manifest `make test` evaluates).
@Suite("Documentation snippets")
struct SnippetTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The Swift blocks of a Markdown file, each with the line it starts on.
    static func swiftBlocks(in file: URL) throws -> [(line: Int, text: String)] {
        var blocks: [(Int, String)] = []
        var current: [String]?
        var start = 0
        for (number, line) in try String(contentsOf: file, encoding: .utf8).components(separatedBy: "\n").enumerated() {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if current == nil, trimmed == "```swift" {
                current = []
                start = number + 1
            } else if let lines = current, trimmed == "```" {
                blocks.append((start, dedent(lines)))
                current = nil
            } else {
                current?.append(line)
            }
        }
        return blocks
    }

    /// The marked regions of a Swift file, dedented.
    static func regions(in file: URL) throws -> [String: String] {
        var regions: [String: String] = [:]
        var current: (name: String, lines: [String])?
        for line in try String(contentsOf: file, encoding: .utf8).components(separatedBy: "\n") {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("// snippet: ") {
                current = (String(trimmed.dropFirst("// snippet: ".count)), [])
            } else if trimmed == "// end snippet", let region = current {
                regions[region.name] = dedent(region.lines)
                current = nil
            } else {
                current?.lines.append(line)
            }
        }
        return regions
    }

    static func dedent(_ lines: [String]) -> String {
        let indent = lines.filter { !$0.trimmingCharacters(in: .whitespaces).isEmpty }.map { $0.prefix { $0 == " " }.count }.min() ?? 0
        return lines.map { String($0.dropFirst(min(indent, $0.prefix { $0 == " " }.count))) }
            .map { $0.replacingOccurrences(of: "\\s+$", with: "", options: .regularExpression) }
            .joined(separator: "\n")
    }

    static var documents: [URL] {
        let catalog = root.appendingPathComponent("Sources/Imago/Imago.docc")
        let articles = (try? FileManager.default.contentsOfDirectory(at: catalog, includingPropertiesForKeys: nil)) ?? []
        let guides = (try? FileManager.default.contentsOfDirectory(at: root.appendingPathComponent("docs"), includingPropertiesForKeys: nil)) ?? []
        return [root.appendingPathComponent("README.md")]
            + (articles + guides).filter { $0.pathExtension == "md" }.sorted { $0.path < $1.path }
    }

    static func allRegions() throws -> [String: String] {
        let folder = root.appendingPathComponent("Examples/Snippets")
        var files = try FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil).filter { $0.pathExtension == "swift" }
        files.append(root.appendingPathComponent("Examples/Install/Package.swift"))
        var regions: [String: String] = [:]
        for file in files { regions.merge(try Self.regions(in: file)) { first, _ in first } }
        return regions
    }

    @Test("every Swift block of the README, the DocC articles and docs/ is a compiled snippet", arguments: documents.map(\.lastPathComponent))
    func blocksCompile(document: String) throws {
        let file = Self.documents.first { $0.lastPathComponent == document }!
        let regions = Set(try Self.allRegions().values)
        let blocks = try Self.swiftBlocks(in: file)
        if document == "README.md" { #expect(!blocks.isEmpty) }
        for block in blocks {
            #expect(regions.contains(block.text), "\(document):\(block.line): this Swift block is not a region of Examples/Snippets or Examples/Install")
        }
    }

    @Test("the checker reads blocks and regions as written: a changed block is caught")
    func checkerCatchesChanges() throws {
        let regions = try Self.allRegions()
        let firstLoad = try #require(regions["first-load"])
        #expect(firstLoad.hasPrefix("import Foundation\nimport Imago\n"))
        let changed = firstLoad.replacingOccurrences(of: "maxPixelSize: 256", with: "maxPixelSize: 257")
        #expect(!Set(regions.values).contains(changed))
        #expect(Self.dedent(["    a", "      b", ""]) == "a\n  b\n")
    }
}
