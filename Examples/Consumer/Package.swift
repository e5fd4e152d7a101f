// swift-tools-version: 6.1
import Foundation
import PackageDescription

// A package that uses Imago as an app would, written from the README's "Add Imago to your package".
// `make consumer` builds it from clean with Imago's default traits and with none
// (IMAGO_TRAITS="" ; a comma-separated list picks some), runs it, and prints build time and size.
// An app names Imago by URL: .package(url: "https://github.com/imago-swift/imago", from: "0.1.0").
let imago = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
let traits: Set<Package.Dependency.Trait> =
    if let list = Context.environment["IMAGO_TRAITS"] {
        Set(list.split(separator: ",").map { Package.Dependency.Trait(name: String($0)) })
    } else {
        [.defaults]
    }

let package = Package(
    name: "Consumer",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(path: imago.path, traits: traits)
    ],
    targets: [
        .executableTarget(
            name: "Consumer",
            dependencies: [.product(name: "Imago", package: imago.lastPathComponent.lowercased())]
        )
    ],
    swiftLanguageModes: [.v6]
)
