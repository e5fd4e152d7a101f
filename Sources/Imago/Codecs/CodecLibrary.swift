// Built with any codec trait whose library is opened on first use.
#if TIFF || AVIF || HEIF || JXL || SVG || Video || RAW

    import CLazyLibraries

    /// A codec library Imago opens the first time a format needs it (Sources/CLazyLibraries): a run
    /// that meets only JPEG, PNG and WebP starts without loading libjxl, libheif, libavif, libtiff or
    /// librsvg and their dependencies, and a machine missing one still runs, that format failing with
    /// ``ImagoError/Code/codecUnavailable(_:)``.
    public enum CodecLibrary: CaseIterable, Sendable {
        /// libjxl, for JPEG XL.
        case jxl
        /// libheif, for HEIC.
        case heif
        /// libavif, for AVIF.
        case avif
        /// libtiff, for TIFF.
        case tiff
        /// librsvg with cairo and GLib, for SVG.
        case rsvg
        /// FFmpeg's libavformat with libavcodec and libavutil, for videos.
        case avformat
        /// FFmpeg's libswscale, for videos' frames.
        case swscale
        /// LibRaw, for camera RAW files.
        case raw

        var id: imago_lazy_library {
            switch self {
            case .jxl: IMAGO_LAZY_JXL
            case .heif: IMAGO_LAZY_HEIF
            case .avif: IMAGO_LAZY_AVIF
            case .tiff: IMAGO_LAZY_TIFF
            case .rsvg: IMAGO_LAZY_RSVG
            case .avformat: IMAGO_LAZY_AVFORMAT
            case .swscale: IMAGO_LAZY_SWSCALE
            case .raw: IMAGO_LAZY_RAW
            }
        }

        /// The format's name in messages.
        var formatName: String {
            switch self {
            case .jxl: "JPEG XL"
            case .heif: "HEIC"
            case .avif: "AVIF"
            case .tiff: "TIFF"
            case .rsvg: "SVG"
            case .avformat, .swscale: "Video"
            case .raw: "Camera RAW"
            }
        }

        /// Whether this process has loaded the library.
        public var isLoaded: Bool { imago_lazy_is_loaded(id) != 0 }

        /// Loads the library if this process has not yet, or throws `codecUnavailable` naming the
        /// format, the file and why (at the decoding stage, or processing when `writing`, as an
        /// encoder's errors are). Every entry into the library goes through here first.
        public func load(writing: Bool = false) throws(ImagoError) {
            guard imago_lazy_load(id) == 0 else { return }
            let file = String(cString: imago_lazy_soname(id)), why = String(cString: imago_lazy_error(id))
            throw ImagoError(
                .codecUnavailable("\(formatName) is not available: \(file) could not be loaded (\(why))"), url: nil,
                stage: writing ? .processing : .decoding)
        }
    }

#endif
