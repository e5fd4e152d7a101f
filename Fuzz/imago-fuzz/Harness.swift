import Foundation
import Imago
import ImagoServer

/// One fuzz target: what it does with each input. Every input must end in a value or an
/// ImagoError; a trap, a sanitizer report or a libFuzzer out-of-memory/time-out is a finding.
struct Harness: Sendable {
    let name: String
    let run: @Sendable (Data) -> Void

    static let all: [Harness] = [
        Harness(name: "decode") { data in
            // The first byte picks limits and a reduced-scale target, so limit checks, DCT scaling
            // and the 1/8 DC decoder are all reached from the same inputs.
            guard let first = data.first else { return }
            let body = data.dropFirst()
            var options = DecodingOptions()
            options.maxDecodedBytes = 256 << 20
            if first & 1 != 0 { options.targetSize = PixelSize(width: 8 + Int(first >> 4), height: 8 + Int(first >> 4)) }
            if first & 2 != 0 { options.targetMode = .fit }
            if first & 4 != 0 {
                options.maxPixels = 4096
                options.maxFrames = 3
            }
            if first & 8 != 0 { options.appliesOrientation = false }
            let registry = DecoderRegistry.standard()
            let estimate = registry.estimate(Data(body), options: options)
            let image = try? registry.decode(Data(body), options: options)
            // A reduced decode's estimate names the size the decode delivers (turned or not).
            if let image, let size = estimate.decodedSize, image.frames.count == 1 {
                precondition(size.width * size.height == image.width * image.height, "estimated \(size), decoded \(image.width)×\(image.height)")
            }
        },
        Harness(name: "preview") { data in
            // Every prefix a transfer could deliver, at most 48 cut points, through one decoder.
            var decoder = PreviewDecoder()
            let step = max(1, data.count / 48)
            for end in stride(from: step, through: data.count, by: step) {
                _ = decoder.preview(of: data.prefix(end))
            }
        },
        Harness(name: "pnm") { data in
            // Netpbm alone, with small limits every other input so the limit checks are reached.
            var options = DecodingOptions()
            if data.count % 2 == 1 { options.maxPixels = 4096 }
            _ = PNMDecoder().estimate(data, options: options)
            _ = try? PNMDecoder().decode(data, options: options)
        },
        Harness(name: "bmp") { data in
            var options = DecodingOptions()
            if data.count % 2 == 1 { options.maxPixels = 4096 }
            _ = BMPDecoder().estimate(data, options: options)
            _ = try? BMPDecoder().decode(data, options: options)
        },
        Harness(name: "tga") { data in
            var options = DecodingOptions()
            if data.count % 2 == 1 { options.maxPixels = 4096 }
            _ = TGADecoder().canDecode(data)
            _ = TGADecoder().estimate(data, options: options)
            _ = try? TGADecoder().decode(data, options: options)
        },
        Harness(name: "ico") { data in
            var options = DecodingOptions()
            if data.count % 2 == 1 { options.maxPixels = 4096 }
            if data.count % 3 == 0 { options.targetSize = PixelSize(width: 20, height: 20) }
            _ = ICODecoder().estimate(data, options: options)
            _ = try? ICODecoder().decode(data, options: options)
        },
        Harness(name: "writers") { data in
            // Round-trip property of the BMP, ICO, interlaced PNG, TIFF and lossless JPEG XL writers: any small image (sides 1…64 from
            // the first two bytes, alpha from the third, pixels from the rest) reads back the same.
            guard data.count >= 4 else { return }
            let bytes = [UInt8](data)
            let width = 1 + Int(bytes[0] % 64), height = 1 + Int(bytes[1] % 64), alpha = bytes[2] & 1 == 1
            let body = bytes[3...]
            var pixels = [UInt8](repeating: 255, count: width * height * 4)
            for index in pixels.indices where alpha || index % 4 != 3 { pixels[index] = body[body.startIndex + index % body.count] }
            let image = Image(
                width: width, height: height, frames: [Image.Frame(pixels: pixels)],
                metadata: ImageMetadata(format: .png, originalWidth: width, originalHeight: height, hasAlpha: alpha))
            var writers: [(any ImageEncoding, any ImageDecoding)] = [
                (BMPEncoder(), BMPDecoder()), (ICOEncoder(), ICODecoder()), (PNGEncoder(interlaced: true), PNGDecoder()),
            ]
            #if TIFF
                writers.append((TIFFEncoder(), TIFFDecoder()))
            #endif
            #if JXL
                writers.append((JXLEncoder(lossless: true), JXLDecoder()))
            #endif
            // A palette PNG of any colour count reads back at its size; few colours come back exactly.
            let colors = 2 + Int(bytes[2] >> 1)
            if let written = try? PNGEncoder(interlaced: bytes[2] & 2 == 2, paletteColors: colors).encode(image) {
                guard let back = try? PNGDecoder().decode(written, options: DecodingOptions()), back.width == width, back.height == height else {
                    fatalError("a \(colors)-colour palette PNG did not read back a \(width)×\(height) image")
                }
            } else {
                fatalError("PNGEncoder refused a \(width)×\(height) image with a palette of \(colors)")
            }
            for (encoder, decoder) in writers {
                guard let written = try? encoder.encode(image), let back = try? decoder.decode(written, options: DecodingOptions()),
                    back.width == width, back.height == height, back.pixels.count == pixels.count
                else { fatalError("\(encoder.format) did not read back a \(width)×\(height) image (alpha \(alpha))") }
                // TIFFDecoder reads through libtiff's RGBA interface, which premultiplies alpha: a
                // colour under alpha a comes back within 255 / a; the others exactly.
                let premultiplies = encoder.format == .tiff
                for index in stride(from: 0, to: pixels.count, by: 4) {
                    let a = Int(pixels[index + 3])
                    let tolerance = premultiplies && a > 0 ? (254 + a) / a : 0
                    guard Int(back.pixels[index + 3]) == a,
                        a == 0 && premultiplies || (0..<3).allSatisfy({ abs(Int(back.pixels[index + $0]) - Int(pixels[index + $0])) <= tolerance })
                    else { fatalError("\(encoder.format) changed pixel \(index / 4) of a \(width)×\(height) image (alpha \(alpha))") }
                }
            }
        },
        Harness(name: "tiff") { data in
            var options = DecodingOptions()
            if data.count % 2 == 1 { options.maxPixels = 4096 }
            _ = TIFFDecoder.pageCount(data)
            _ = TIFFDecoder().estimate(data, options: options)
            _ = try? TIFFDecoder().decode(data, options: options)
            _ = try? TIFFDecoder(page: 1).decode(data, options: options)
        },
        Harness(name: "avif") { data in
            var options = DecodingOptions()
            if data.count % 2 == 1 { options.maxPixels = 4096 }
            _ = AVIFDecoder().canDecode(data)
            _ = AVIFDecoder().estimate(data, options: options)
            _ = try? AVIFDecoder().decode(data, options: options)
        },
        Harness(name: "heif") { data in
            var options = DecodingOptions()
            if data.count % 2 == 1 { options.maxPixels = 4096 }
            if data.count % 3 == 0 { options.targetSize = PixelSize(width: 8, height: 8) }
            _ = HEIFDecoder().canDecode(data)
            _ = HEIFDecoder().estimate(data, options: options)
            _ = try? HEIFDecoder().decode(data, options: options)
        },
        Harness(name: "jxl") { data in
            var options = DecodingOptions()
            if data.count % 2 == 1 { options.maxPixels = 4096 }
            if data.count % 3 == 0 { options.maxFrames = 2 }
            _ = JXLDecoder().canDecode(data)
            _ = JXLDecoder().estimate(data, options: options)
            _ = try? JXLDecoder().decode(data, options: options)
        },
        Harness(name: "video") { data in
            // Every container through FFmpeg: the file's own demuxer by its first bytes, a frame at
            // a second chosen by the length, within a small pixel limit and a deadline below the
            // fuzzer's time-out (a file that makes FFmpeg spin must stop there).
            var options = DecodingOptions()
            options.maxPixels = data.count % 2 == 1 ? 4096 : 1 << 20
            options.maxDecodeDuration = .seconds(5)
            options.videoFrame = VideoFrameSelection(second: Double(data.count % 5) * 0.5, keyframesOnly: data.count % 3 == 0, maxPackets: 200)
            if data.count % 7 == 0 { options.targetSize = PixelSize(width: 8, height: 8) }
            let decoders = DecoderRegistry.standard(families: [.video])
            guard let decoder = decoders.decoder(for: data) else { return }
            _ = decoder.estimate(data, options: options)
            _ = try? decoder.decode(data, options: options)
        },
        Harness(name: "raw") { data in
            // Every camera RAW kind through LibRaw: the sniff, the estimate, and a decode that takes
            // the preview, a half or a full development by the length, within a small pixel and
            // memory limit and a deadline below the fuzzer's time-out.
            var options = DecodingOptions()
            options.maxPixels = data.count % 2 == 1 ? 1 << 16 : 1 << 22
            options.maxDecodedBytes = 64 << 20
            options.maxDecodeDuration = .seconds(5)
            options.usesEmbeddedThumbnail = data.count % 3 == 0
            if data.count % 5 == 0 { options.targetSize = PixelSize(width: 16, height: 16) }
            let decoders = DecoderRegistry.standard(families: [.raw])
            guard let decoder = decoders.decoder(for: data) else { return }
            _ = decoder.estimate(data, options: options)
            _ = try? decoder.decode(data, options: options)
        },
        Harness(name: "gif-animation") { data in
            // Decoded, then written back by the encoder and read again: the same size and frames.
            let file = GIFAnimationGenerator.make(from: data)
            decode(file, with: GIFDecoder())
            var options = DecodingOptions()
            options.maxDecodedBytes = 64 << 20
            guard let image = try? GIFDecoder().decode(file, options: options) else { return }
            guard let written = try? GIFEncoder().encode(image) else { fatalError("a decoded GIF could not be encoded") }
            guard let back = try? GIFDecoder().decode(written, options: DecodingOptions()),
                (back.width, back.height, back.frames.count) == (image.width, image.height, image.frames.count)
            else { fatalError("an encoded GIF did not decode to its size and frames") }
        },
        Harness(name: "webp-animation") { data in decode(WebPAnimationGenerator.make(from: data), with: WebPDecoder()) },
        Harness(name: "http-freshness") { data in
            // Lines of "name: value"; the freshness decision and the conditional headers from them.
            let text = String(decoding: data, as: UTF8.self)
            let headers = HeaderFields(
                text.split(separator: "\n").map { line in
                    let parts = line.split(separator: ":", maxSplits: 1)
                    return HeaderFields.Field(name: String(parts.first ?? ""), value: parts.count > 1 ? String(parts[1]) : "")
                })
            let received = Date(timeIntervalSince1970: 1_700_000_000)
            let freshness = HTTPFreshness(headers: headers, receivedAt: received)
            _ = freshness.isFresh(storedAt: received, now: received.addingTimeInterval(3600))
            _ = freshness.validationHeaders
        },
        Harness(name: "data-url") { data in
            // The loader's parser, called directly: a task per input made LeakSanitizer see the
            // task's memory before its teardown and report a leak now and then.
            guard let url = URL(string: "data:" + String(decoding: data, as: UTF8.self)) else { return }
            _ = try? DataURLLoader.decode(url)
        },
        Harness(name: "process") { data in ProcessorChain.run(Array(data)) },
        Harness(name: "svg") { data in
            // The renderer at a size the first byte picks, and the pass-through sanitiser.
            guard let first = data.first else { return }
            var options = DecodingOptions()
            options.maxPixels = 1 << 20
            if first & 1 != 0 { options.targetSize = PixelSize(width: 1 + Int(first >> 1), height: 1 + Int(first >> 2)) }
            _ = try? SVGDecoder().decode(Data(data.dropFirst()), options: options)
            _ = try? SVGSanitizer.sanitize(Data(data.dropFirst()))
        },
        Harness(name: "imgproxy-options") { data in ImgproxyOptionsFeed.run(Array(data)) },
        Harness(name: "thumbor-url") { data in ThumborURLFeed.run(Array(data)) },
        Harness(name: "thumbor-conf") { data in
            // The settings file reader, and what the server makes of a file it accepts.
            guard let file = try? ThumborConfigFile(parsing: String(decoding: data, as: UTF8.self)) else { return }
            for (_, value) in file.settings { _ = value.settingText }
            _ = try? ServerSettings.configuration(ServerSettings.values(thumborConfig: file))
        },
        Harness(name: "dotenv") { data in
            // The .env reader of IMGPROXY_ENV_LOCAL_FILE_PATH and secrets, and what the server
            // makes of the variables it accepts.
            guard let text = try? DotEnvText(String(decoding: data, as: UTF8.self), environment: ["HOME": "/root"]) else { return }
            // Settings that name files are left out: the fuzzer is not to read /dev/zero.
            let named = ["PATH", "FILE", "DIR", "ROOT", "CONFIG", "CASCADE"]
            let variables = text.variables.filter { variable in !named.contains { variable.name.hasSuffix($0) } }
            _ = try? ServerSettings.configuration(Dictionary(variables, uniquingKeysWith: { $1 }))
        },
        Harness(name: "placeholder") { data in
            // Hashes from hostile text and bytes, rendered when accepted; a hash of pixels the
            // bytes make, read back.
            if let hash = ThumbHash(bytes: Array(data.prefix(64))) {
                _ = hash.render()
                _ = hash.averageColor
                _ = try? hash.render(width: 1 + Int(data.last ?? 0) % 64, height: 1 + Int(data.first ?? 0) % 64)
            }
            if let hash = BlurHash(string: String(decoding: data.prefix(200), as: UTF8.self)) {
                _ = try? hash.render(width: 1 + Int(data.last ?? 0) % 64, height: 1 + Int(data.first ?? 0) % 64, punch: Float(data.count % 5))
            }
            guard data.count >= 6 else { return }
            let width = 1 + Int(data[0]) % 100, height = 1 + Int(data[1]) % 100
            let pixels = (0..<(width * height * 4)).map { data[2 + $0 % (data.count - 2)] }
            let thumb = ThumbHash(pixels: pixels, width: width, height: height)
            guard ThumbHash(bytes: thumb.bytes) == thumb else { fatalError("a ThumbHash did not read back") }
            let components = (1 + Int(data[2]) % 9, 1 + Int(data[3]) % 9)
            guard let blur = try? BlurHash(pixels: pixels, width: width, height: height, components: components),
                BlurHash(string: blur.string) == blur
            else { fatalError("a BlurHash did not read back") }
        },
        Harness(name: "http-response") { data in HTTPResponseFeed.run(Array(data)) },
        Harness(name: "memory-cache") { data in MemoryCacheOperations.run(Array(data)) },
        Harness(name: "color-profile") { data in ColorProfileFeed.run(data) },
        Harness(name: "object-store") { data in ObjectStoreFeed.run(data) },
        Harness(name: "result-store") { data in ResultStoreFeed.run(data) },
        Harness(name: "gain-map") { data in GainMapFeed.run(data) },
        Harness(name: "pdfinfo") { data in PDFInfoFeed.run(data) },
        Harness(name: "ranged-source") { data in RangedSourceFeed.run(data) },
        Harness(name: "cascade") { data in CascadeFeed.run(data) },
    ]

    /// The harness IMAGO_FUZZ_TARGET names (default `decode`).
    static let selected: Harness = {
        let name = ProcessInfo.processInfo.environment["IMAGO_FUZZ_TARGET"] ?? "decode"
        guard let harness = all.first(where: { $0.name == name }) else {
            FileHandle.standardError.write(Data("unknown IMAGO_FUZZ_TARGET \(name); one of \(all.map(\.name))\n".utf8))
            exit(64)
        }
        return harness
    }()
}

/// Estimates and decodes a generated file, with a per-decode budget that leaves libFuzzer's
/// memory limit room for ASan.
func decode(_ file: Data, with decoder: some ImageDecoding) {
    var options = DecodingOptions()
    options.maxDecodedBytes = 256 << 20
    _ = decoder.estimate(file, options: options)
    _ = try? decoder.decode(file, options: options)
}
