// swift-tools-version: 6.1
import Foundation
import PackageDescription

// SwiftPM names a path dependency after its folder, which is whatever the clone was called.
let imago = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().lastPathComponent.lowercased()

// Benchmarks live in their own package so `make test` never builds them; `make bench` builds this
// in release mode against the project one folder up.
let package = Package(
    name: "ImagoBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(path: "..")
    ],
    targets: [
        .executableTarget(
            name: "imago-bench",
            dependencies: [
                .product(name: "Imago", package: imago),
                .product(name: "ImagoTestSupport", package: imago),
            ]
        )
    ],
    swiftLanguageModes: [.v6]
)
