import ArgumentParser
import Imago

/// Which frame of a video source, or pages of a PDF, `imago convert`, `imago thumbnail` and
/// `imago info` show.
struct SourceOptions: ParsableArguments {
    @Option(help: ArgumentHelp("A video source's frame: the first at or past this second (the last frame of a shorter video).", valueName: "S"))
    var videoSecond = 1.0

    @Flag(help: "A video source's keyframe at or before --video-second instead: faster, up to a keyframe interval earlier.")
    var videoKeyframes = false

    @Flag(
        help:
            "A video source's most telling keyframe instead: of eight spread over its first five minutes, the one whose brightness varies most, mostly black or white ones left out."
    )
    var videoRepresentative = false

    @Option(help: ArgumentHelp("A PDF source's page, from 0 (past the last page, the last).", valueName: "N"))
    var page = 0

    @Option(help: ArgumentHelp("How many of a PDF source's pages from --page on, stacked top to bottom.", valueName: "N"))
    var pages = 1

    @Flag(help: "A PDF page with no background: transparent where the page paints nothing (rendered by cairo).")
    var pdfNoBackground = false

    mutating func validate() throws {
        guard videoSecond.isFinite, videoSecond >= 0 else { throw ValidationError("--video-second must be 0 or more, not \(videoSecond)") }
        guard page >= 0 else { throw ValidationError("--page must be 0 or more, not \(page)") }
        guard pages >= 1 else { throw ValidationError("--pages must be 1 or more, not \(pages)") }
    }

    /// `configuration` reading video frames as the options say.
    func apply(to configuration: inout ImagePipeline.Configuration) {
        configuration.decodingOptions.videoFrame = VideoFrameSelection(second: videoSecond, keyframesOnly: videoKeyframes)
        configuration.decodingOptions.videoFrame.representative = videoRepresentative
        configuration.decodingOptions.pages = PageSelection(first: page, count: pages)
        configuration.decodingOptions.pdfTransparentBackground = pdfNoBackground
    }
}

extension DecoderRegistry {
    /// The command line's decoders: still images, videos, camera RAW files and PDF documents, as a
    /// file named on the command line is the user's own choice (the server reads videos, RAW files
    /// and PDFs only when its operator says so).
    static func commandLine() -> DecoderRegistry { .standard(families: [.still, .video, .raw, .document]) }
}
