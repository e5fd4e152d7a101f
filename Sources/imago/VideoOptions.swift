import ArgumentParser
import Imago

/// Which frame of a video source `imago convert`, `imago thumbnail` and `imago info` show.
struct VideoOptions: ParsableArguments {
    @Option(help: ArgumentHelp("A video source's frame: the first at or past this second (the last frame of a shorter video).", valueName: "S"))
    var videoSecond = 1.0

    @Flag(help: "A video source's keyframe at or before --video-second instead: faster, up to a keyframe interval earlier.")
    var videoKeyframes = false

    @Flag(
        help:
            "A video source's most telling keyframe instead: of eight spread over its first five minutes, the one whose brightness varies most, mostly black or white ones left out."
    )
    var videoRepresentative = false

    mutating func validate() throws {
        guard videoSecond.isFinite, videoSecond >= 0 else { throw ValidationError("--video-second must be 0 or more, not \(videoSecond)") }
    }

    /// `configuration` reading video frames as the options say.
    func apply(to configuration: inout ImagePipeline.Configuration) {
        configuration.decodingOptions.videoFrame = VideoFrameSelection(second: videoSecond, keyframesOnly: videoKeyframes)
        configuration.decodingOptions.videoFrame.representative = videoRepresentative
    }
}

extension DecoderRegistry {
    /// The command line's decoders: still images, videos and camera RAW files, as a file named on
    /// the command line is the user's own choice (the server reads videos and RAW files only when
    /// its operator says so).
    static func commandLine() -> DecoderRegistry { .standard(families: [.still, .video, .raw]) }
}
