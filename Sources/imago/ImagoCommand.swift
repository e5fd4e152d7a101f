import ArgumentParser
import Foundation

/// Imago's version (semantic versioning); CHANGELOG.md's newest release says the same, which a test
/// checks.
let imagoVersion = "0.1.0"

@main
struct ImagoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "imago",
        abstract: "Load images through the Imago pipeline.",
        version: imagoVersion,
        subcommands: [
            FetchCommand.self, ConvertCommand.self, ThumbnailCommand.self, InfoCommand.self, PlaceholderCommand.self, ServeCommand.self, HealthCommand.self,
            DemoCommand.self,
        ]
    )
}

/// Writes a line to standard output at once (unbuffered), so it stays in order with the progress
/// lines on standard error.
func say(_ line: String = "") {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

/// Writes a line to standard error at once: warnings that must not mix into `--json` output.
func warn(_ line: String) {
    FileHandle.standardError.write(Data((line + "\n").utf8))
}
