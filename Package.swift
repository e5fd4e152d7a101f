// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "Imago",
    platforms: [.macOS(.v15), .iOS(.v18)],
    products: [
        .library(name: "Imago", targets: ["Imago"]),
        .library(name: "ImagoServer", targets: ["ImagoServer"]),
        .executable(name: "imago", targets: ["imago"]),
    ],
    // What a consumer may leave out: each trait brings a part and its dependencies. The default is
    // all of them; `traits: []` builds Imago with file and data: loaders, the memory cache, the
    // codecs and processing only.
    traits: [
        .trait(name: "DiskCache", description: "DiskCache, Imago's disk cache of original bytes (GRDB, SQLite, xxHash)."),
        .trait(
            name: "HTTPClientLoader",
            description: "HTTPDataLoader, http(s) on Imago's HTTP/1.1 client (SwiftNIO, BoringSSL), or on a caller's AsyncHTTPClient."
        ),
        .trait(name: "URLSessionLoader", description: "URLSessionDataLoader, http(s) on URLSession (FoundationNetworking, libcurl)."),
        .trait(name: "TIFF", description: "TIFFDecoder, TIFF through libtiff (libtiff-dev)."),
        .trait(name: "AVIF", description: "AVIFDecoder and AVIFEncoder, AVIF through libavif with dav1d and libaom (libavif-dev)."),
        .trait(name: "HEIF", description: "HEIFDecoder, HEIC through libheif with libde265 (libheif-dev)."),
        .trait(name: "JXL", description: "JXLDecoder, JPEG XL through libjxl (libjxl-dev)."),
        .trait(name: "SVG", description: "SVGDecoder, SVG rendered by librsvg (librsvg2-dev)."),
        .trait(
            name: "Video",
            description: "VideoDecoder, a frame of MP4, QuickTime, WebM, Matroska or AVI through FFmpeg (libavformat-dev, libavcodec-dev, libswscale-dev)."
        ),
        .trait(
            name: "RAW",
            description: "RAWDecoder, camera RAW (DNG, CR2, CR3, NEF, ARW, ORF, RAF, RW2, PEF, SRW) through LibRaw (libraw-dev)."
        ),
        .trait(
            name: "PDF",
            description: "PDFDecoder, PDF pages rendered by Poppler's pdfinfo, pdftoppm and pdftocairo in a child process (poppler-utils, at run time)."
        ),
        // URLSessionLoader is not a default: on Linux FoundationNetworking brings libcurl and about
        // 30 libraries, whose loading was 8.5 of a process's 19.7 ms start (BENCHMARKS.md).
        .default(enabledTraits: ["DiskCache", "HTTPClientLoader", "TIFF", "AVIF", "HEIF", "JXL", "SVG", "Video", "RAW", "PDF"]),
    ],
    dependencies: [
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-nio-http2", from: "1.46.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-distributed-tracing", from: "1.7.3"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.35.2"),
        // OpenTelemetry's SDK for `imago serve --open-telemetry`: OTLP over HTTP only (gRPC's stack
        // would add minutes to every build for a protocol collectors also take over HTTP).
        .package(url: "https://github.com/swift-otel/swift-otel", from: "1.6.0", traits: ["OTLPHTTP"]),
    ],
    targets: [
        .target(
            name: "Imago",
            dependencies: [
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "DequeModule", package: "swift-collections"),
                "CTurboJPEG",
                "CJPEGWriter",
                "CJPEGDC",
                "CResample",
                "CSPNG",
                "CZlib",
                "CDeflate",
                "CWebP",
                "CGIF",
                "CLCMS",
                "CLCMSSupport",
                .product(name: "AsyncHTTPClient", package: "async-http-client", condition: .when(traits: ["HTTPClientLoader"])),
                .product(name: "NIOCore", package: "swift-nio", condition: .when(traits: ["HTTPClientLoader"])),
                .product(name: "NIOHTTP1", package: "swift-nio", condition: .when(traits: ["HTTPClientLoader"])),
                .product(name: "NIOPosix", package: "swift-nio", condition: .when(traits: ["HTTPClientLoader"])),
                .product(name: "NIOSSL", package: "swift-nio-ssl", condition: .when(traits: ["HTTPClientLoader"])),
                .product(name: "NIOHTTP2", package: "swift-nio-http2", condition: .when(traits: ["HTTPClientLoader"])),
                .product(name: "NIOTLS", package: "swift-nio", condition: .when(traits: ["HTTPClientLoader"])),
                .product(name: "NIOSOCKS", package: "swift-nio-extras", condition: .when(traits: ["HTTPClientLoader"])),
                // Object stores' request signing (SigV4's SHA-256 and HMAC, GCS's RS256).
                .product(name: "Crypto", package: "swift-crypto", condition: .when(traits: ["HTTPClientLoader"])),
                .product(name: "_CryptoExtras", package: "swift-crypto", condition: .when(traits: ["HTTPClientLoader"])),
                .product(name: "GRDB", package: "GRDB.swift", condition: .when(traits: ["DiskCache"])),
                .product(name: "GRDBSQLite", package: "GRDB.swift", condition: .when(traits: ["DiskCache"])),
                .target(name: "CXXHash", condition: .when(traits: ["DiskCache"])),
                .target(name: "CTIFFSupport", condition: .when(traits: ["TIFF"])),
                .target(name: "CLazyLibraries", condition: .when(traits: ["TIFF", "AVIF", "HEIF", "JXL", "SVG", "Video", "RAW"])),
                .target(name: "CVideo", condition: .when(traits: ["Video"])),
                .target(name: "CRaw", condition: .when(traits: ["RAW"])),
                .target(name: "CChildProcess", condition: .when(traits: ["PDF"])),
                .target(name: "CAVIF", condition: .when(traits: ["AVIF"])),
                .target(name: "CHEIF", condition: .when(traits: ["HEIF"])),
                .target(name: "CJXL", condition: .when(traits: ["JXL"])),
                .target(name: "CRSVG", condition: .when(traits: ["SVG"])),
            ]
        ),
        .systemLibrary(name: "CTurboJPEG", pkgConfig: "libturbojpeg", providers: [.apt(["libturbojpeg0-dev"])]),
        // JPEG written through libjpeg's API, for optimised Huffman tables: see Sources/CJPEGWriter.
        .target(name: "CJPEGWriter", linkerSettings: [.linkedLibrary("jpeg")]),
        // Imago's own decoder of JPEG at 1/8 scale from DC coefficients alone: see Sources/CJPEGDC.
        .target(name: "CJPEGDC"),
        // The resampler's inner loops for 8-bit pixels (pmaddwd on x86): see Sources/CResample.
        .target(name: "CResample"),
        .systemLibrary(name: "CSPNG", pkgConfig: "spng", providers: [.apt(["libspng-dev"])]),
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        .systemLibrary(name: "CDeflate", pkgConfig: "libdeflate", providers: [.apt(["libdeflate-dev"])]),
        .systemLibrary(name: "CWebP", pkgConfig: "libwebpdemux", providers: [.apt(["libwebp-dev"])]),
        // Header-only use of xxHash (libxxhash-dev): see Sources/CXXHash/include/CXXHash.h.
        .target(name: "CXXHash"),
        // glibc's mallinfo2, which Swift's Glibc module does not declare: the server's heap metrics.
        .target(name: "CProcessMemory"),
        .systemLibrary(name: "CGIF", pkgConfig: "libgif", providers: [.apt(["libgif-dev"])]),
        .systemLibrary(name: "CLCMS", pkgConfig: "lcms2", providers: [.apt(["liblcms2-dev"])]),
        // Little CMS in a context whose allocations are counted against a limit: see Sources/CLCMSSupport.
        .target(name: "CLCMSSupport", dependencies: ["CLCMS"], linkerSettings: [.linkedLibrary("lcms2")]),
        // No pkgConfig and no link line for the libraries opened on first use (libtiff, libavif,
        // libheif, libjxl, librsvg): their functions are CLazyLibraries' jumps, so the binary does
        // not load them at start. Elsewhere than Linux they are linked as usual (CLazyLibraries).
        .systemLibrary(name: "CLibTIFF", providers: [.apt(["libtiff-dev"])]),
        // libtiff from memory, its errors caught, its variadic tag getters wrapped: see Sources/CTIFFSupport.
        .target(name: "CTIFFSupport", dependencies: ["CLibTIFF"]),
        // No pkgConfig: libavif's .pc passes -DAVIF_DLL, a flag SwiftPM refuses with a warning;
        // the header and library are on the default paths.
        .systemLibrary(name: "CAVIF", providers: [.apt(["libavif-dev"])]),
        .systemLibrary(name: "CHEIF", providers: [.apt(["libheif-dev"])]),
        .target(
            name: "CLazyLibraries",
            linkerSettings: ["jxl", "heif", "avif", "tiff", "rsvg-2", "cairo", "gobject-2.0", "glib-2.0", "avformat", "avcodec", "avutil", "swscale", "raw_r"]
                .map {
                    .linkedLibrary($0, .when(platforms: [.macOS, .iOS, .tvOS, .watchOS, .visionOS, .windows, .android, .wasi, .openbsd]))
                }
        ),
        // FFmpeg through Imago's own C (a read function, a deadline, no protocol): see Sources/CVideo.
        // Its headers are on the default path; its functions are CLazyLibraries' jumps.
        .target(name: "CVideo", dependencies: ["CLazyLibraries"]),
        // LibRaw through Imago's own C (the bytes read in place, sizes checked before LibRaw
        // allocates, a deadline at each stage): see Sources/CRaw. Its functions are CLazyLibraries' jumps.
        .target(name: "CRaw", dependencies: ["CLazyLibraries"]),
        // A program run as a child process that is killed at a deadline, its heap bounded by the
        // kernel: Poppler's tools, which have no way to be stopped from inside. See Sources/CChildProcess.
        .target(name: "CChildProcess"),
        // No pkgConfig, as for CAVIF: libjxl's .pc passes -DHWY_SHARED_DEFINE.
        .systemLibrary(name: "CJXL", providers: [.apt(["libjxl-dev"])]),
        // No pkgConfig: librsvg's .pc passes -pthread and GLib's include folders; the shim declares
        // the handful of functions it needs instead.
        .systemLibrary(name: "CRSVG", providers: [.apt(["librsvg2-dev"])]),
        // Test support (an HTTP origin with TLS, gates and a request log) stays with the tests and is
        // no product; the benchmarks' package builds the same folder through a symlink.
        .target(
            name: "ImagoTestSupport",
            dependencies: [
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            path: "Tests/ImagoTestSupport"
        ),
        .executableTarget(
            name: "imago",
            dependencies: [
                "Imago",
                "ImagoServer",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ]
        ),
        // The README's and the documentation's code, compiled by `make test` (SnippetTests checks the
        // text is the same); not a product.
        .target(name: "ImagoSnippets", dependencies: ["Imago"], path: "Examples/Snippets"),
        // The image service mounted on an application's own Hummingbird router (README, "Embedding").
        .executableTarget(
            name: "imago-embedded-example",
            dependencies: ["ImagoServer", .product(name: "Hummingbird", package: "hummingbird")],
            path: "Examples/EmbeddedServer"
        ),
        // libFuzzer harnesses over Imago's Swift API; `make fuzz` builds and runs them.
        .executableTarget(
            name: "imago-fuzz",
            dependencies: [
                "Imago",
                "ImagoServer",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            path: "Fuzz/imago-fuzz"
        ),
        .executableTarget(
            name: "imago-cache-writer",
            dependencies: ["Imago", "ImagoTestSupport"],
            path: "Tests/imago-cache-writer"
        ),
        // The image service as a library: imgproxy URLs and signatures, options to processors,
        // format negotiation, the Hummingbird router. `imago serve` runs it.
        .target(
            name: "ImagoServer",
            dependencies: [
                "Imago",
                "CProcessMemory",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "NIOExtras", package: "swift-nio-extras"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "OTel", package: "swift-otel"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .testTarget(
            name: "ImagoTests",
            dependencies: [
                "Imago",
                "ImagoServer",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                "ImagoTestSupport",
                "CJPEGDC",
                "CTurboJPEG",
                "CLCMSSupport",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "InMemoryLogging", package: "swift-log"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
