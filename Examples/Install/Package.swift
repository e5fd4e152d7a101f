// swift-tools-version: 6.1
// The README's install lines, in a manifest `make test` evaluates (`swift package dump-package`),
// so that they parse. Examples/Consumer is the package `make consumer` builds and runs.

// snippet: install
import PackageDescription

let package = Package(
    name: "MyApp",
    platforms: [.macOS(.v15), .iOS(.v18)],  // and Linux
    dependencies: [
        // The default: disk cache, http(s) on SwiftNIO, every codec (URLSessionLoader is opt-in).
        .package(url: "https://github.com/imago-swift/imago.git", from: "0.1.0")
        // Or only what you use, for example no disk cache and no network loader:
        // .package(url: "https://github.com/imago-swift/imago.git", from: "0.1.0", traits: []),
        // .package(url: "https://github.com/imago-swift/imago.git", from: "0.1.0", traits: ["DiskCache", "URLSessionLoader"]),
    ],
    targets: [
        .executableTarget(name: "MyApp", dependencies: [.product(name: "Imago", package: "imago")])
    ]
)
// end snippet
