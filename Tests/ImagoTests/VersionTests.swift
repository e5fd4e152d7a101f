import Foundation
import Testing

@Suite("Version")
struct VersionTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    @Test("imago --version prints the version CHANGELOG.md's newest release names (an Unreleased section above it aside)")
    func versionMatchesChangelog() async throws {
        let changelog = try String(contentsOf: Self.root.appendingPathComponent("CHANGELOG.md"), encoding: .utf8)
        let heading = try #require(changelog.components(separatedBy: "\n").first { $0.hasPrefix("## ") && $0 != "## Unreleased" })
        let released = try #require(heading.dropFirst(3).split(separator: " ").first.map(String.init))
        #expect(released.split(separator: ".").count == 3 && released.allSatisfy { $0.isNumber || $0 == "." })

        let binary = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("imago")
        let printed = String(decoding: try await runProcess(binary, ["--version"]).output, as: UTF8.self)
        #expect(printed.trimmingCharacters(in: .whitespacesAndNewlines) == released)
    }
}
