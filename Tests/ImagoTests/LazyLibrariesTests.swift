import AsyncHTTPClient
import Foundation
import ImagoTestSupport
import Testing

@testable import Imago

/// The heavy codec libraries are opened on first use: glibc's own loader trace (`LD_DEBUG=files`)
/// shows a JPEG→PNG run loads none of them and a JPEG XL one loads libjxl; a library that cannot
/// be opened makes its format fail with a clear error, in the CLI and the server, and nothing else.
@Suite("Codec libraries loaded on first use", .timeLimit(.minutes(6)))
struct LazyLibrariesTests {
    static let heavy = [
        "libjxl", "libheif", "libavif", "libtiff", "librsvg", "libcairo", "libx265", "libaom", "libdav1d", "libavformat", "libavcodec", "libswscale", "libraw",
    ]

    /// `imago` with `arguments` and `environment` added; its status and standard error.
    static func run(_ arguments: [String], environment: [String: String]) throws -> (status: Int32, errors: String) {
        let process = Process()
        process.executableURL = ServeCommandTests.executable
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, text)
    }

    /// The libraries glibc's trace says the process opened.
    static func opened(_ trace: String) -> [String] {
        trace.split(separator: "\n").compactMap { line in
            guard let range = line.range(of: "file=") else { return nil }
            return String(line[range.upperBound...].prefix { $0 != " " && $0 != "\t" && $0 != "[" })
        }
    }

    @Test("a JPEG to PNG run opens none of the heavy libraries; JPEG XL, TIFF, video and RAW runs open theirs")
    func loadedOnFirstUse() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let jpeg = directory.appendingPathComponent("a.jpg")
        try Corpus.data("jpeg/video-001.jpeg").write(to: jpeg)
        let plain = try Self.run(["convert", jpeg.path, directory.appendingPathComponent("a.png").path], environment: ["LD_DEBUG": "files"])
        #expect(plain.status == 0)
        let opened = Self.opened(plain.errors)
        #expect(opened.contains { $0.hasPrefix("libturbojpeg") }, "the trace lists what it opened")
        for library in Self.heavy { #expect(!opened.contains { $0.hasPrefix(library) }, "\(library) opened for JPEG→PNG") }
        for (output, library) in [("a.jxl", "libjxl"), ("a.tiff", "libtiff")] {
            let run = try Self.run(["convert", jpeg.path, directory.appendingPathComponent(output).path], environment: ["LD_DEBUG": "files"])
            #expect(run.status == 0)
            #expect(Self.opened(run.errors).contains { $0.hasPrefix(library) }, "\(output)")
            #expect(!Self.opened(run.errors).contains { $0.hasPrefix("librsvg") }, "\(output)")
        }
        // A video source opens FFmpeg's libraries, and only then.
        let video = directory.appendingPathComponent("a.mp4")
        try await runTool(
            "/usr/bin/ffmpeg",
            ["-v", "error", "-f", "lavfi", "-i", "testsrc2=size=64x48:rate=10:duration=2", "-c:v", "libx264", "-pix_fmt", "yuv420p", video.path])
        let run = try Self.run(["convert", video.path, directory.appendingPathComponent("v.png").path], environment: ["LD_DEBUG": "files"])
        #expect(run.status == 0)
        for library in ["libavformat", "libavcodec", "libswscale"] { #expect(Self.opened(run.errors).contains { $0.hasPrefix(library) }, "\(library)") }
        #expect(!Self.opened(run.errors).contains { $0.hasPrefix("libraw") })
        // A camera RAW source opens LibRaw, and only then.
        let dng = try await RAWDecoderTests.make(in: directory)
        let raw = try Self.run(["convert", dng.path, directory.appendingPathComponent("r.png").path], environment: ["LD_DEBUG": "files"])
        #expect(raw.status == 0)
        #expect(Self.opened(raw.errors).contains { $0.hasPrefix("libraw_r") })
        #expect(!Self.opened(raw.errors).contains { $0.hasPrefix("libavformat") })
    }

    @Test("a library that cannot be opened: that format fails naming it, no file is left, other formats work")
    func missingLibrary() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let jpeg = directory.appendingPathComponent("a.jpg")
        try Corpus.data("jpeg/video-001.jpeg").write(to: jpeg)
        let missing = ["IMAGO_LIBRARY_JXL": directory.appendingPathComponent("libjxl-missing.so").path]
        let write = try Self.run(["convert", jpeg.path, directory.appendingPathComponent("a.jxl").path], environment: missing)
        #expect(write.status != 0 && write.errors.contains("JPEG XL is not available") && write.errors.contains("libjxl-missing.so"))
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("a.jxl").path))
        // A real JPEG XL file to read: the same error when the library is missing.
        let jxl = directory.appendingPathComponent("b.jxl")
        #expect(try Self.run(["convert", jpeg.path, jxl.path], environment: [:]).status == 0)
        let read = try Self.run(["convert", jxl.path, directory.appendingPathComponent("b.png").path], environment: missing)
        #expect(read.status != 0 && read.errors.contains("JPEG XL is not available"))
        #expect(try Self.run(["convert", jpeg.path, directory.appendingPathComponent("c.webp").path], environment: missing).status == 0)
    }

    @Test("the server without libjxl: a JPEG XL answer is a 400, a JPEG XL source a 422, JPEG still served")
    func serverWithoutLibrary() async throws {
        let root = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        try Corpus.data("jpeg/video-001.jpeg").write(to: root.appendingPathComponent("photo.jpg"))
        try JXLEncoder(quality: 80).encode(try DecoderRegistry.standard().decode(Corpus.data("jpeg/video-001.jpeg")))
            .write(to: root.appendingPathComponent("photo.jxl"))
        let (process, port) = try await ServeCommandTests.start(
            ["--local-root", root.path], environment: ["IMAGO_LIBRARY_JXL": root.appendingPathComponent("none.so").path])
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        func status(_ path: String) async throws -> Int {
            Int(try await client.execute(HTTPClientRequest(url: "http://127.0.0.1:\(port)" + path), timeout: .seconds(30)).status.code)
        }
        #expect(try await status("/_/w:20/plain/local:%2F%2F%2Fphoto.jpg@jxl") == 400)
        #expect(try await status("/_/w:20/plain/local:%2F%2F%2Fphoto.jxl@png") == 422)
        #expect(try await status("/_/w:20/plain/local:%2F%2F%2Fphoto.jpg@png") == 200)
        try await client.shutdown()
        process.terminate()
        #expect(await ServeCommandTests.waitForExit(process) == 0)
    }

    @Test("first uses from many tasks at once: each library opened once, every decode right")
    func concurrentFirstUse() async throws {
        let photo = try DecoderRegistry.standard().decode(Corpus.data("jpeg/video-001.jpeg"))
        let files: [(Data, any ImageDecoding)] = [
            (try TIFFEncoder().encode(photo), TIFFDecoder()), (try JXLEncoder(lossless: true).encode(photo), JXLDecoder()),
        ]
        let sizes = try await withThrowingTaskGroup(of: (Int, Int).self) { group in
            for index in 0..<8 {
                let (data, decoder) = files[index % 2]
                group.addTask { [data] in
                    let image = try decoder.decode(data, options: DecodingOptions())
                    return (image.width, image.height)
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(sizes.count == 8 && sizes.allSatisfy { $0 == (photo.width, photo.height) })
        #expect(CodecLibrary.tiff.isLoaded && CodecLibrary.jxl.isLoaded)
    }
}
