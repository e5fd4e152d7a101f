import Dispatch
import Foundation
import Synchronization
@testable import Imago
import ImagoTestSupport
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
    func estimate(_ data: Data, options: DecodingOptions) -> DecodeEstimate? { inner.estimate(data, options: options) }
}

/// A decoder for bytes starting "BLOCK" that waits, in its decode, until the test opens its gate,
/// and says when `expected` decodes are waiting. The wait gives up after 150 s (and says so), so that
/// a pipeline that blocks the pool its transfers need fails the test inside its 3-minute limit
/// instead of hanging it. Not less: with the whole suite in parallel on 2 cores, the transfer's own
/// steps can wait tens of seconds for a thread (20 s was passed in a fresh-clone run).
private final class GatedDecoder: ImageDecoding {
    let format = ImageFormat.png
    let expected: Int
    let gaveUp = Atomic<Bool>(false)
    private let entered = Locked<(count: Int, waiter: CheckedContinuation<Void, Never>?)>((0, nil))
    private let gate = DispatchSemaphore(value: 0)

    init(expected: Int) { self.expected = expected }

    func canDecode(_ data: Data) -> Bool { data.starts(with: Data("BLOCK".utf8)) }

    /// One pixel: without an estimate the pipeline would reserve `maxDecodedBytes` for each
    /// blocked decode, and two of them would hold the whole shared budget, stalling every other
    /// test's decodes (and this test's second decode) until they let go.
    func estimate(_ data: Data, options: DecodingOptions) -> DecodeEstimate? { DecodeEstimate(width: 1, height: 1, bytes: 4) }

    func decode(_ data: Data, options: DecodingOptions) throws(ImagoError) -> Image {
        let waiter = entered.withLock { entered -> CheckedContinuation<Void, Never>? in
            entered.count += 1
            guard entered.count == expected else { return nil }
            defer { entered.waiter = nil }
            return entered.waiter
        }
        waiter?.resume()
        if gate.wait(timeout: .now() + .seconds(150)) == .timedOut { gaveUp.store(true, ordering: .relaxed) }
        return Image(
            width: 1, height: 1, frames: [.init(pixels: [0, 0, 0, 255])],
            metadata: ImageMetadata(format: .png, originalWidth: 1, originalHeight: 1, hasAlpha: false))
    }

    /// Returns once `expected` decodes are waiting at the gate.
    func allWaiting() async {
        await withCheckedContinuation { continuation in
            let arrived = entered.withLock { entered -> Bool in
                if entered.count >= expected { return true }
                entered.waiter = continuation
                return false
            }
            if arrived { continuation.resume() }
        }
    }

    func open() {
        for _ in 0..<expected { gate.signal() }
    }
}

@Suite("Decoding in the pipeline", .timeLimit(.minutes(6)))
struct PipelineDecodingTests {
    /// Decodes run on Imago's CPU stage (as many at once as there are cores), not on Swift's
    /// cooperative pool, which is as wide: were they there, a decode blocked on every core would
    /// stop every transfer, and this test would hit its time limit.
    @Test("with a decode blocked on every core, a bytes-only transfer still completes; the decodes finish once let go")
    func decodesLeaveThePoolFree() async throws {
        let cores = ProcessInfo.processInfo.activeProcessorCount
        let gated = GatedDecoder(expected: cores)
        let origin = try await TestOrigin.start()
        let pipeline = ImagePipeline(decoders: DecoderRegistry([gated, PNGDecoder()]))
        let blocked = (0..<cores).map { index in
            pipeline.imageTask(with: ImageRequest(url: origin.serve(Data("BLOCK \(index)".utf8), at: "/blocked/\(index)")))
        }
        await gated.allWaiting()
        let bytes = try await pipeline.data(for: ImageRequest(url: origin.serve(try Corpus.data("png/benchRGB.png"), at: "/bytes.png"))).data
        #expect(bytes == (try Corpus.data("png/benchRGB.png")))
        let decodesGaveUp = gated.gaveUp.load(ordering: .relaxed)
        #expect(!decodesGaveUp, "the transfer waited for the decodes to give up")
        gated.open()
        for task in blocked {
            #expect(try await task.response.image.width == 1)
        }
        await pipeline.waitUntilIdle()
        try await origin.shutdown()
    }

    @Test("image(for:) loads and decodes; the response carries bytes and image")
    func image() async throws {
        try await withOrigin { origin, pipeline in
            let url = origin.serve(try Corpus.data("jpeg/video-001.jpeg"), at: "/photo")
            let image = try await pipeline.image(for: url)
            #expect((image.width, image.height) == (150, 103))
            #expect(image.metadata.format == .jpeg)
            let response = try await pipeline.response(for: ImageRequest(url: url))
            #expect(response.image.width == 150)
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
            #expect(response.image.metadata.format == .png)
        }
        let dataResponse = try await bytesOnly.response
        #expect(dataResponse.data.count > 0 && dataResponse.source == .network)
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
            async let data = pipeline.data(for: ImageRequest(url: url)).data
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
                #expect(error.code == .imageTooLarge(width: 150, height: 103, limit: .pixels(1000)))
            }
        }
    }
}
