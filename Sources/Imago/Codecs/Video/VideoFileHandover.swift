#if Video
    import Foundation

    /// Opened videos the pipeline's estimate hands to the decode that follows it on the same
    /// bytes, so FFmpeg opens a file (and probes its streams, which for H.264 decodes frames) once
    /// per request, not twice. Kept by the bytes' storage and every limit the open used (a
    /// ``BytesKeyedShelf``); a decode takes its file out, and gives it its own deadline. An
    /// estimate whose decode never comes (refused by the memory budget) lets its file and bytes
    /// go at the next park or take after 10 s, or when two newer ones are parked.
    enum VideoFileHandover {
        private static let parked = BytesKeyedShelf<String, VideoFile>()

        /// What the open depended on besides the bytes.
        private static func detail(_ container: VideoContainer, _ options: DecodingOptions) -> String {
            "\(container),\(options.maxPixels),\(options.videoFrame.maxPackets),\(options.videoProbeBytes ?? 0),\(String(describing: options.videoMaxAnalyzeDuration))"
        }

        /// Parks `file`, opened from `data`, for the decode of the same bytes.
        static func park(_ file: VideoFile, for data: Data, container: VideoContainer, options: DecodingOptions) {
            parked.put(file, for: data, detail(container, options))
        }

        /// The file parked for `data` with the same limits, taken out; nil when none is.
        static func take(for data: Data, container: VideoContainer, options: DecodingOptions) -> VideoFile? {
            parked.take(for: data, detail(container, options))
        }
    }
#endif
