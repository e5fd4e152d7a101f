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

    /// The request options the flags ask for.
    var requestOptions: ImageRequest.Options {
        var options: ImageRequest.Options = []
        if keepColorProfile { options.insert(.keepsColorProfile) }
        if keepMetadata { options.insert(.keepsMetadata) } else if keepCopyright { options.insert(.keepsCopyright) }
        return options
    }
}
