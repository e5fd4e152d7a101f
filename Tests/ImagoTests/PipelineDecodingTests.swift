import Foundation
import Imago
import ImagoTestSupport
import Synchronization
import Testing

/// A real decoder that counts its decodes, to prove work is shared.
private final class CountingDecoder: ImageDecoding {
    let inner: any ImageDecoding
    let count = Atomic<Int>(0)
    init(_ inner: any ImageDecoding) { self.inner = inner }
    var format: ImageFormat { inner.format }
    func canDecode(_ data: Data) -> Bool { inner.canDecode(data) }
    func decode(_ data: Data, options: DecodingOptions) throws(ImagoError) -> Image {
        count.add(1, ordering: .relaxed)
        return try inner.decode(data, options: options)
    }
}

@Suite("Decoding in the pipeline", .timeLimit(.minutes(1)))
struct PipelineDecodingTests {
    @Test("image(for:) loads and decodes; the response carries bytes and image")
    func image() async throws {
        try await withOrigin { origin, pipeline in
            let url = origin.serve(try Corpus.data("jpeg/video-001.jpeg"), at: "/photo")
            let image = try await pipeline.image(for: url)
            #expect((image.width, image.height) == (150, 103))
            #expect(image.metadata.format == .jpeg)
            let response = try await pipeline.response(for: ImageRequest(url: url))
            #expect(response.image?.width == 150)
            #expect(response.data.count > 0)
        }
    }

    @Test("10 concurrent image requests for one URL: one transfer, one decode; data-only handles share the transfer without the image")
    func sharedDecode() async throws {
        let counting = CountingDecoder(PNGDecoder())
        let origin = try await TestOrigin.start()
        let pipeline = ImagePipeline(decoders: DecoderRegistry([counting]))
        let url = origin.url("/shared.png?gate=go")
        origin.serve(try Corpus.data("png/benchRGB.png"), at: "/shared.png")
        let images = (0..<10).map { _ in pipeline.imageTask(with: ImageRequest(url: url)) }
        let bytesOnly = pipeline.dataTask(with: ImageRequest(url: url))
        await origin.wait { $0.requests.count == 1 }
        origin.release("go")
        for task in images {
            let response = try await task.response
            #expect(response.image?.metadata.format == .png)
        }
        let dataResponse = try await bytesOnly.response
        #expect(dataResponse.image == nil)
        #expect(origin.log.requests.count == 1)
        #expect(counting.count.load(ordering: .relaxed) == 1)
        await pipeline.waitUntilIdle()
        try await origin.shutdown()
    }

    @Test("bytes no decoder knows fail image requests with unsupportedFormat (URL, stage), while data requests succeed")
    func undecodable() async throws {
        try await withOrigin { origin, pipeline in
            let url = origin.serve(Data("<html>not an image</html>".utf8), at: "/page.jpg")
            async let image = pipeline.response(for: ImageRequest(url: url))
            async let data = pipeline.data(for: url)
            #expect(try await data.count == 25)
            do {
                _ = try await image
                Issue.record("decoded HTML")
            } catch let error as ImagoError {
                #expect(error.code == .unsupportedFormat(firstBytes: "3c 68 74 6d 6c 3e 6e 6f 74 20 61 6e"))
                #expect(error.url == url)
                #expect(error.stage == .decoding)
                #expect(error.description.hasPrefix("decoding \(url.absoluteString) failed: unsupported image format"))
            }
        }
    }

    @Test("the configuration's decoding limits apply in the pipeline")
    func limits() async throws {
        try await withOrigin(configure: { $0.decodingOptions.maxPixels = 1000 }) { origin, pipeline in
            let url = origin.serve(try Corpus.data("jpeg/video-001.jpeg"), at: "/big.jpg")
            do {
                _ = try await pipeline.image(for: url)
                Issue.record("decoded over the limit")
            } catch let error as ImagoError {
                #expect(error.code == .imageTooLarge(width: 150, height: 103))
            }
        }
    }
}
