#if RAW
    import CRaw
    import Foundation

    /// One camera RAW file opened through LibRaw (Sources/CRaw) over bytes the caller keeps alive:
    /// what it declares, its preview, its developed picture. Used inside ``RAWFile/open(_:kind:options:_:)`` only.
    final class RAWFile {
        private let raw: OpaquePointer
        private let limits: imago_raw_limits
        /// What the file declares.
        let declared: imago_raw_info
        let kind: RAWKind

        private init(raw: OpaquePointer, kind: RAWKind, limits: imago_raw_limits) {
            self.raw = raw
            self.limits = limits
            self.kind = kind
            var declared = imago_raw_info()
            imago_raw_describe(raw, &declared)
            self.declared = declared
        }

        deinit { imago_raw_close(raw) }

        /// Opens `data` within `options`' pixel and memory limits and decode time, and runs `body`
        /// with it while the bytes are held.
        static func open<T>(_ data: Data, kind: RAWKind, options: DecodingOptions, _ body: (RAWFile) throws(ImagoError) -> T) throws(ImagoError) -> T {
            try CodecLibrary.raw.load()
            var limits = imago_raw_limits()
            limits.max_pixels = Int64(options.maxPixels)
            limits.max_bytes = Int64(options.reservedBytes.map { min($0, options.maxDecodedBytes) } ?? options.maxDecodedBytes)
            limits.deadline_ns = CLibraryCall.deadline(after: options.maxDecodeDuration ?? RAWDecoder.defaultMaxDuration)
            let result: Result<T, ImagoError> = data.withUnsafeBytes { bytes in
                var opened: OpaquePointer?
                var message = [CChar](repeating: 0, count: 256)
                let status = imago_raw_open(&opened, bytes.baseAddress, bytes.count, &limits, &message, message.count)
                guard status == 0, let opened else { return .failure(Self.error(status, message, format: kind.format, limit: .pixels(options.maxPixels))) }
                let file = RAWFile(raw: opened, kind: kind, limits: limits)
                do throws(ImagoError) {
                    try options.check(width: Int(file.declared.raw_width), height: Int(file.declared.raw_height))
                    try options.check(width: Int(file.declared.width), height: Int(file.declared.height))
                    return .success(try body(file))
                } catch {
                    return .failure(error)
                }
            }
            return try result.get()
        }

        /// The embedded preview: a JPEG's bytes, or a bitmap's pixels as RGBA with their size.
        enum Preview {
            case jpeg(Data)
            case bitmap([UInt8], width: Int, height: Int)
        }

        /// The embedded preview, or nil when the file has none Imago reads; a bitmap's size is
        /// checked against `options` before its pixels are copied.
        func preview(options: DecodingOptions) throws(ImagoError) -> Preview? {
            var bytes: UnsafePointer<UInt8>?
            var length = 0
            var format: Int32 = 0, width: Int32 = 0, height: Int32 = 0
            var message = [CChar](repeating: 0, count: 256)
            let status = imago_raw_preview(raw, &bytes, &length, &format, &width, &height, &message, message.count)
            if status == Int32(IMAGO_RAW_NO_PREVIEW) { return nil }
            guard status == 0, let bytes else { throw Self.error(status, message, format: kind.format, limit: .decodedBytes(Int(limits.max_bytes))) }
            guard format == 2 else { return .jpeg(Data(UnsafeBufferPointer(start: bytes, count: length))) }
            let (columns, rows) = (Int(width), Int(height))
            try options.check(width: columns, height: rows)
            try options.checkMemory(2, width: columns, height: rows)
            return .bitmap(try Self.rgba(bytes, pixels: columns * rows), width: columns, height: rows)
        }

        /// Bytes LibRaw holds to develop the picture at half or full size.
        func developBytes(half: Bool) -> Int { Int(imago_raw_develop_bytes(raw, half ? 1 : 0)) }

        /// The picture developed at half or full size to sRGB RGBA, turned upright when `turn`.
        func develop(half: Bool, turn: Bool, options: DecodingOptions) throws(ImagoError) -> (pixels: [UInt8], width: Int, height: Int) {
            var rgb: UnsafePointer<UInt8>?
            var width: Int32 = 0, height: Int32 = 0
            var message = [CChar](repeating: 0, count: 256)
            let status = imago_raw_develop(raw, half ? 1 : 0, turn ? 1 : 0, &rgb, &width, &height, &message, message.count)
            guard status == 0, let rgb else {
                throw Self.error(
                    status, message, format: kind.format, limit: .decodedBytes(Int(limits.max_bytes)), width: Int(declared.width), height: Int(declared.height))
            }
            let (columns, rows) = (Int(width), Int(height))
            try options.check(width: columns, height: rows)
            try options.checkMemory(1, width: columns, height: rows)
            return (try Self.rgba(rgb, pixels: columns * rows), columns, rows)
        }

        /// `count` pixels of 8-bit RGB as opaque RGBA.
        private static func rgba(_ rgb: UnsafePointer<UInt8>, pixels count: Int) throws(ImagoError) -> [UInt8] {
            try makePixelBuffer(count: count * 4) { out in
                for index in 0..<count {
                    out[index * 4] = rgb[index * 3]
                    out[index * 4 + 1] = rgb[index * 3 + 1]
                    out[index * 4 + 2] = rgb[index * 3 + 2]
                    out[index * 4 + 3] = 255
                }
                return .success(())
            }
        }

        /// The error a LibRaw status means; `limit` is the one a refusal for size went over.
        private static func error(
            _ status: Int32, _ message: [CChar], format: ImageFormat, limit: DecodingLimit, width: Int = 0, height: Int = 0
        ) -> ImagoError {
            let text = CLibraryCall.message(message)
            switch status {
            case Int32(IMAGO_RAW_TIMED_OUT): return ImagoError(.timedOut, url: nil, stage: .decoding)
            case Int32(IMAGO_RAW_TOO_LARGE): return ImagoError(.imageTooLarge(width: width, height: height, limit: limit), url: nil, stage: .decoding)
            default: return ImagoError.invalid(format, text.isEmpty ? "LibRaw failed (\(status))" : text)
            }
        }
    }
#endif
