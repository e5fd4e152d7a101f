import Foundation
import Imago

/// Animated GIF and WebP for the demo, made at start from the shared corpus with Debian's
/// `gifsicle` and `img2webp` (installed by `make deps`), since the corpus has none. Missing tools
/// or files mean no animated samples, not an error.
enum AnimatedSamples {
    static let corpus = "../shared/corpus"

    /// Writes what it can into `directory` and returns the files.
    static func make(in directory: URL) -> [URL] {
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return [gif(in: directory), webp(in: directory)].compactMap { $0 }
    }

    /// Three renderings of the same video frame, one after another, looping.
    private static func gif(in directory: URL) -> URL? {
        let frames = ["video-001.gif", "video-001.5bpp.gif", "video-005.gray.gif"].map { "\(corpus)/gif/\($0)" }
        let output = directory.appendingPathComponent("animated.gif")
        guard frames.allSatisfy(FileManager.default.fileExists(atPath:)),
            run("/usr/bin/gifsicle", ["--loop", "--delay", "30"] + frames + ["-o", output.path])
        else { return nil }
        return output
    }

    /// A photo, then grey, then blurred (made with Imago's processors), looping.
    private static func webp(in directory: URL) -> URL? {
        let source = URL(fileURLWithPath: "\(corpus)/webp/video-001.png")
        guard let data = try? Data(contentsOf: source), let photo = try? DecoderRegistry.standard().decode(data) else { return nil }
        guard let blur = try? ImageProcessors.GaussianBlur(radius: 3) else { return nil }
        let variants: [any ImageProcessing] = [ImageProcessors.Composition([]), ImageProcessors.Grayscale(), blur]
        var frames: [String] = []
        for (index, processor) in variants.enumerated() {
            let frame = directory.appendingPathComponent("frame-\(index).png")
            guard let image = try? processor.process(photo), (try? PNGEncoder().encode(image).write(to: frame)) != nil else { return nil }
            frames.append(frame.path)
        }
        defer { for frame in frames { try? FileManager.default.removeItem(atPath: frame) } }
        let output = directory.appendingPathComponent("animated.webp")
        guard run("/usr/bin/img2webp", ["-loop", "0", "-d", "300"] + frames + ["-o", output.path]) else { return nil }
        return output
    }

    private static func run(_ tool: String, _ arguments: [String]) -> Bool {
        guard FileManager.default.isExecutableFile(atPath: tool) else { return false }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return false }
        process.waitUntilExit()
        return process.terminationStatus == 0
    }
}
