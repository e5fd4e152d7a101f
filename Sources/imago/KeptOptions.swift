import ArgumentParser
import Imago

/// What of a source `imago convert` and `imago thumbnail` keep: by default pixels converted to
/// sRGB and no metadata.
struct KeptOptions: ParsableArguments {
    @Flag(help: "Keep the source's colour profile: its pixels unconverted and the profile embedded (default: converted to sRGB, no profile).")
    var keepColorProfile = false

    @Flag(help: "Keep the source's EXIF and XMP, GPS included, the orientation reset to 1 (default: none).")
    var keepMetadata = false

    @Flag(help: "Keep only the source's copyright and author (EXIF Copyright/Artist, XMP dc:rights/dc:creator).")
    var keepCopyright = false

    @Option(
        help: ArgumentHelp(
            "An HDR photo's gain map (Ultra HDR JPEG): keep it in JPEG output, which stays HDR, or drop it (the SDR base alone). Other formats always get the SDR base.",
            valueName: "keep|drop"))
    var hdr = HDRPolicy.keep

    /// What `--hdr` says.
    enum HDRPolicy: String, ExpressibleByArgument {
        case keep, drop
    }

    /// The request options the flags ask for, writing `format`: the gain map is decoded only when
    /// it can be written.
    func requestOptions(writing format: ImageFormat) -> ImageRequest.Options {
        var options: ImageRequest.Options = []
        if hdr == .keep, format == .jpeg { options.insert(.keepsGainMap) }
        if keepColorProfile { options.insert(.keepsColorProfile) }
        if keepMetadata { options.insert(.keepsMetadata) } else if keepCopyright { options.insert(.keepsCopyright) }
        return options
    }
}
