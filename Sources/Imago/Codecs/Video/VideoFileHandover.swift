#if Video
    import Foundation

    /// Opened videos the pipeline's estimate hands to the decode that follows it on the same
    /// bytes, so FFmpeg opens a file (and probes its streams, which for H.264 decodes frames) once
    /// per request, not twice. Keyed by the bytes' storage (the parked file holds them, so no
    /// other bytes can take that address meanwhile) and every limit the open used; a decode takes
    /// its file out, and gives it its own deadline. At most two are parked, none for more than
    /// 10 s: an estimate whose decode never comes (refused by the memory budget) lets its file and
    /// bytes go at the next park or take after that.
    enum VideoFileHandover {
        struct Key: Hashable {
            var address: Int
            var length: Int
            var container: VideoContainer
            var limits: String
        }

        /// A parked file: used by one thread at a time, the estimate's and then the decode's.
        private struct Parked: @unchecked Sendable {
            let key: Key
            let file: VideoFile
            let since: ContinuousClock.Instant
        }

        private static let parked = Locked<[Parked]>([])
        private static let capacity = 2
        private static let longest = Duration.seconds(10)

        static func key(_ data: Data, container: VideoContainer, options: DecodingOptions) -> Key {
            let address = data.withUnsafeBytes { Int(bitPattern: $0.baseAddress) }
            let limits =
                "\(options.maxPixels),\(options.videoFrame.maxPackets),\(options.videoProbeBytes ?? 0),\(String(describing: options.videoMaxAnalyzeDuration))"
            return Key(address: address, length: data.count, container: container, limits: limits)
        }

        /// Parks `file` for the decode of the same bytes.
        static func park(_ file: VideoFile, key: Key) {
            let now = ContinuousClock.now
            let released = parked.withLock { list -> [Parked] in
                var released = list.filter { now - $0.since > longest }
                list.removeAll { now - $0.since > longest }
                list.append(Parked(key: key, file: file, since: now))
                released += list.prefix(max(0, list.count - capacity))
                list.removeFirst(max(0, list.count - capacity))
                return released
            }
            // Closed here, outside the lock.
            _ = released
        }

        /// The file parked for `key`, taken out; nil when none is.
        static func take(_ key: Key) -> VideoFile? {
            let now = ContinuousClock.now
            let (taken, released) = parked.withLock { list -> (VideoFile?, [Parked]) in
                let released = list.filter { now - $0.since > longest }
                list.removeAll { now - $0.since > longest }
                guard let index = list.firstIndex(where: { $0.key == key }) else { return (nil, released) }
                return (list.remove(at: index).file, released)
            }
            _ = released
            return taken
        }
    }
#endif
