import Foundation
import Imago
import ImagoTestSupport
import Testing

@Suite("Progressive previews", .timeLimit(.minutes(6)))
struct PreviewTests {
    /// Every preview made while feeding `data` in `step`-byte pieces.
    static func previews(of data: Data, step: Int) -> [Image] {
        var decoder = PreviewDecoder()
        return (Array(stride(from: step, to: data.count, by: step)) + [data.count]).compactMap { decoder.preview(of: data.prefix($0)) }
    }

    static func photo() throws -> Image {
        try PNGDecoder().decode(Corpus.data("webp/blue-purple-pink-large.png"), options: DecodingOptions())
    }

    @Test("a progressive JPEG yields a full-size preview after each complete scan, the last equal to the image")
    func progressiveJPEG() throws {
        let data = try JPEGEncoder(quality: 90, progressive: true).encode(Self.photo())
        let previews = Self.previews(of: data, step: 512)
        let full = try JPEGDecoder().decode(data, options: DecodingOptions())
        #expect(previews.count >= 5)  // libjpeg's default progression has about ten scans
        #expect(previews.allSatisfy { ($0.width, $0.height) == (full.width, full.height) })
        #expect(Corpus.samePixels(previews.last!.pixels, full.pixels))
        // Each scan refines the picture: the first preview is the furthest from the final one.
        #expect(
            Corpus.meanDifference(previews.first!, full) > Corpus.meanDifference(previews[previews.count / 2], full),
            "\(previews.map { Corpus.meanDifference($0, full) })")
    }

    @Test("baseline JPEG, PNG and WebP yield partial rows: the top of a half-received image matches the whole", arguments: ["jpeg", "png", "webp"])
    func partialRows(format: String) throws {
        let photo = try Self.photo()
        let data: Data =
            switch format {
            case "jpeg": try JPEGEncoder(quality: 90).encode(photo)
            case "png": try PNGEncoder().encode(photo)
            default: try WebPEncoder(quality: 90).encode(photo)
            }
        let full = try DecoderRegistry.standard().decode(data)
        var decoder = PreviewDecoder()
        let preview = decoder.preview(of: data.prefix(data.count / 2))
        let half = try #require(preview)
        #expect((half.width, half.height) == (full.width, full.height))
        let topRows = full.width * 4 * 8
        #expect(Corpus.samePixels(Array(half.pixels.prefix(topRows)), Array(full.pixels.prefix(topRows))))
        #expect(!Corpus.samePixels(half.pixels, full.pixels))
        let again = decoder.preview(of: data.prefix(data.count / 2))
        #expect(again == nil, "nothing new, no preview")
    }

    @Test("GIF and data too short for a header give no preview")
    func none() throws {
        var decoder = PreviewDecoder()
        let gif = decoder.preview(of: try Corpus.data("gif/video-001.gif"))
        let header = decoder.preview(of: Data([0xFF, 0xD8, 0xFF]))
        let empty = decoder.preview(of: Data())
        #expect(gif == nil && header == nil && empty == nil)
    }

    @Test("the pipeline delivers previews while bytes arrive, only to requests that ask, before the final image")
    func pipelinePreviews() async throws {
        let data = try JPEGEncoder(quality: 90, progressive: true).encode(Self.photo())
        try await withOrigin(configure: { $0.previewInterval = .zero }) { origin, pipeline in
            origin.serve(data, at: "/progressive.jpg")
            // The first half, then the rest once a preview has been delivered: no timing involved.
            let url = origin.url("/progressive.jpg?pause_after=\(data.count / 2)&pause_gate=previewed")
            let previews = Recorder<ImageResponse>()
            let plainPreviews = Recorder<ImageResponse>()
            let asking = pipeline.imageTask(
                with: ImageRequest(url: url, options: .previews),
                preview: {
                    previews.append($0)
                    origin.release("previewed")
                })
            let plain = pipeline.imageTask(with: ImageRequest(url: url), preview: { plainPreviews.append($0) })
            let events = asking.events
            let final = try await asking.response
            _ = try await plain.response
            #expect(!final.isPreview)
            #expect(previews.all.count >= 1)
            #expect(previews.all.allSatisfy { $0.isPreview && $0.image.width == final.image.width })
            #expect(plainPreviews.all.isEmpty)
            var kinds: [String] = []
            for await event in events {
                switch event {
                case .progress: if kinds.last != "progress" { kinds.append("progress") }
                case .preview: kinds.append("preview")
                case .finished: kinds.append("finished")
                }
            }
            #expect(kinds.last == "finished")
            #expect(kinds.filter { $0 == "finished" }.count == 1)
            #expect(kinds.contains("preview"))
            #expect(origin.log.requests.count == 1)
        }
    }

    /// A format of this test's own: "STRIPES" then one gray byte per row of a 4-pixel-wide image
    /// whose height is the byte after the magic. Its decoder gives previews of the rows so far.
    struct StripesDecoder: ImageDecoding {
        var format: ImageFormat { ImageFormat(rawValue: "stripes") }
        func canDecode(_ data: Data) -> Bool { data.starts(with: Array("STRIPES".utf8)) }

        func decode(_ data: Data, options: DecodingOptions) throws(ImagoError) -> Image {
            guard let image = image(of: data, rows: nil) else { throw ImagoError(.invalidImage("stripes cut short"), url: nil, stage: .decoding) }
            return image
        }

        func preview(of data: Data, after shown: Int, options: DecodingOptions) -> PartialImage? {
            let rows = max(0, data.count - 8)
            guard rows > shown, let image = image(of: data, rows: rows) else { return nil }
            return PartialImage(image: image, reached: rows)
        }

        private func image(of data: Data, rows: Int?) -> Image? {
            let bytes = [UInt8](data)
            guard bytes.count >= 8 else { return nil }
            let height = Int(bytes[7])
            guard height > 0, rows != nil || bytes.count >= 8 + height else { return nil }
            var pixels = [UInt8](repeating: 0, count: 4 * height * 4)
            for row in 0..<min(height, bytes.count - 8) {
                for x in 0..<4 {
                    pixels.replaceSubrange((row * 4 + x) * 4..<(row * 4 + x) * 4 + 4, with: [bytes[8 + row], bytes[8 + row], bytes[8 + row], 255])
                }
            }
            return Image(
                width: 4, height: height, frames: [Image.Frame(pixels: pixels)],
                metadata: ImageMetadata(format: format, originalWidth: 4, originalHeight: height, hasAlpha: rows != nil))
        }
    }

    @Test("a decoder registered by the user gives previews through the pipeline, as the built-in ones do")
    func registeredDecoderPreviews() async throws {
        let data = Data("STRIPES".utf8) + [200] + (0..<200).map { UInt8($0) }
        try await withOrigin(configure: { $0.previewInterval = .zero }) { origin, pipeline in
            pipeline.decoders.register(StripesDecoder())
            origin.serve(data, at: "/a.stripes")
            let url = origin.url("/a.stripes?pause_after=108&pause_gate=previewed")
            // The rest is held until a preview shows all of the first 100 rows (one made from
            // fewer bytes, if the first read was short, is followed by another).
            let previews = Recorder<ImageResponse>()
            let task = pipeline.imageTask(
                with: ImageRequest(url: url, options: .previews),
                preview: { preview in
                    guard preview.image.frames[0].pixels[99 * 16 + 3] == 255 else { return }
                    previews.append(preview)
                    origin.release("previewed")
                })
            let final = try await task.response
            #expect(final.image.height == 200 && final.image.metadata.format.rawValue == "stripes")
            let first = try #require(previews.all.first)
            #expect(first.isPreview && first.image.height == 200)
            // Row 99 is painted with its own gray; row 150 had not arrived.
            let pixels = first.image.frames[0].pixels
            #expect(pixels[99 * 16] == 99 && pixels[150 * 16 + 3] == 0)
        }
    }
}
