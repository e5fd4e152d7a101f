import Foundation
import Synchronization
@testable import Imago
import ImagoTestSupport
import Testing

@Suite("Decode memory budget", .timeLimit(.minutes(6)))
struct DecodeMemoryBudgetTests {
    /// Yields until `budget` has `count` waiters: they queue on another task.
    static func waitForWaiters(_ budget: DecodeMemoryBudget, _ count: Int) async {
        while budget.waiting < count { await Task.yield() }
    }

    @Test("a reservation that does not fit waits, first come first served, until enough is released")
    func waitsForRoom() async throws {
        let budget = DecodeMemoryBudget(bytes: 100)
        let order = Recorder<String>()
        try await budget.reserve(60, width: 1, height: 1)
        async let second: Void = {
            try await budget.reserve(50, width: 1, height: 1)
            order.append("50 admitted")
        }()
        await Self.waitForWaiters(budget, 1)
        async let third: Void = {
            try await budget.reserve(10, width: 1, height: 1)
            order.append("10 admitted")
        }()
        await Self.waitForWaiters(budget, 2)
        // 10 would fit now, but waits behind 50: no overtaking.
        #expect(budget.held == 60)
        order.append("released 60")
        budget.release(60)
        try await second
        try await third
        #expect(order.all == ["released 60", "50 admitted", "10 admitted"] || order.all == ["released 60", "10 admitted", "50 admitted"])
        #expect(budget.held == 60)
        budget.release(50)
        budget.release(10)
        #expect(budget.held == 0)
    }

    @Test("work that finishes what a decode began (an encode) waits ahead of the decodes queued before it, in its own order")
    func aheadOfDecodes() async throws {
        let budget = DecodeMemoryBudget(bytes: 100)
        let order = Recorder<String>()
        try await budget.reserve(100, width: 1, height: 1)
        async let decode: Void = {
            try await budget.reserve(100, width: 1, height: 1)
            order.append("decode")
            budget.release(100)
        }()
        await Self.waitForWaiters(budget, 1)
        async let firstEncode: Void = {
            try await budget.reserve(100, width: 1, height: 1, ahead: true)
            order.append("encode 1")
            budget.release(100)
        }()
        await Self.waitForWaiters(budget, 2)
        async let secondEncode: Void = {
            try await budget.reserve(100, width: 1, height: 1, ahead: true)
            order.append("encode 2")
            budget.release(100)
        }()
        await Self.waitForWaiters(budget, 3)
        budget.release(100)
        try await decode
        try await firstEncode
        try await secondEncode
        #expect(order.all == ["encode 1", "encode 2", "decode"])
        #expect(budget.held == 0)
    }

    @Test("tryReserve holds at once only what fits with nobody waiting ahead; never past the budget")
    func tryReserve() async throws {
        let budget = DecodeMemoryBudget(bytes: 100)
        #expect(budget.tryReserve(60))
        #expect(!budget.tryReserve(50))
        #expect(!budget.tryReserve(Int.max))
        #expect(budget.held == 60)
        async let waiter: Void = budget.reserve(50, width: 1, height: 1)
        await Self.waitForWaiters(budget, 1)
        // 10 fits, but a decode waits ahead of it.
        #expect(!budget.tryReserve(10))
        budget.release(60)
        try await waiter
        #expect(budget.tryReserve(10) && budget.held == 60)
        budget.release(60)
        #expect(budget.held == 0)
    }

    @Test("one decode over the whole budget is refused at once, naming the budget")
    func overWholeBudget() async {
        let budget = DecodeMemoryBudget(bytes: 100)
        do {
            try await budget.reserve(101, width: 7, height: 9)
            Issue.record("reserved more than the budget")
        } catch {
            #expect(error.code == .imageTooLarge(width: 7, height: 9, limit: .decodeMemoryBudget(100)))
            #expect(error.description.contains("decodeMemoryBudget"))
        }
        #expect(budget.held == 0 && budget.waiting == 0)
    }

    @Test("a waiter cancelled leaves the queue, and those behind it go on")
    func cancelledWaiter() async throws {
        let budget = DecodeMemoryBudget(bytes: 100)
        try await budget.reserve(90, width: 1, height: 1)
        let waiting = Task { try await budget.reserve(50, width: 1, height: 1) }
        await Self.waitForWaiters(budget, 1)
        waiting.cancel()
        await #expect(throws: ImagoError.self) { try await waiting.value }
        #expect(budget.waiting == 0 && budget.held == 90)
        try await budget.reserve(10, width: 1, height: 1)
        budget.release(100)
        #expect(budget.held == 0)
    }

    @Test("estimates come from headers: JPEG, PNG, GIF frames, WebP animation frames")
    func estimates() throws {
        let options = DecodingOptions()
        let jpeg = DecoderRegistry.standard().estimate(try Corpus.data("jpeg/video-001.jpeg"), options: options)
        #expect((jpeg.width, jpeg.height, jpeg.bytes, jpeg.format, jpeg.decodedSize) == (150, 103, 150 * 103 * 4, .jpeg, nil))
        // Progressive: libjpeg's coefficients, 2 bytes a sample (4:4:4 has 3 a pixel), a row of blocks more.
        let progressive = DecoderRegistry.standard().estimate(try Corpus.data("jpeg/video-001.progressive.jpeg"), options: options)
        #expect(progressive.bytes == 150 * 103 * 4 + 150 * 103 * 6 + 150 * 64)
        let gif = DecoderRegistry.standard().estimate(try HostileFiles.data("gif-frame-outside-canvas.gif"), options: options)
        #expect((gif.width, gif.height, gif.bytes, gif.format) == (10, 10, 3 * 400, .gif))
        let webp = DecoderRegistry.standard().estimate(try HostileFiles.data("webp-timestamps-past-int32.webp"), options: options)
        #expect((webp.width, webp.height, webp.bytes, webp.format) == (1, 1, 132 * 4, .webp))
        // Capped at maxDecodedBytes: the decoder refuses anything larger itself.
        let bomb = DecoderRegistry.standard().estimate(try HostileFiles.data("gif-thousand-frames.gif"), options: options)
        #expect(bomb.bytes == options.maxDecodedBytes)
        #expect(DecoderRegistry.standard().estimate(Data("<html>".utf8), options: options).bytes == 0)
    }

    @Test("in the pipeline: an image over the budget fails its decode, bytes-only requests still load, nothing stays held")
    func pipeline() async throws {
        let budget = DecodeMemoryBudget(bytes: 10_000)
        try await withOrigin(configure: { $0.decodeMemoryBudget = budget }) { origin, pipeline in
            let url = origin.serve(try Corpus.data("jpeg/video-001.jpeg"), at: "/a.jpg")
            let image = pipeline.imageTask(with: ImageRequest(url: url))
            let data = pipeline.dataTask(with: ImageRequest(url: url))
            do {
                _ = try await image.response
                Issue.record("decoded over the budget")
            } catch let error as ImagoError {
                #expect(error.code == .imageTooLarge(width: 150, height: 103, limit: .decodeMemoryBudget(10_000)))
                #expect(error.url == url)
            }
            #expect(try await data.response.data.count > 0)
            #expect(budget.held == 0)
            #expect(origin.log.requests.count == 1)
        }
    }

    @Test("a JPEG's samples per pixel from its frame header: 4:4:4 3, 4:2:2 and 4:4:0 2, 4:2:0 and 4:1:1 1.5, 4:1:0 1.25, grey 1")
    func samplesPerPixel() throws {
        let expected = [
            "video-001.q50.444.progressive": 24, "video-001.q50.422": 16, "video-001.q50.440": 16, "video-001.q50.420.progressive": 12,
            "video-001.q50.411": 12, "video-001.q50.410": 10, "video-005.gray": 8,
        ]
        for (name, eighths) in expected {
            let data = try Corpus.data("jpeg/\(name).jpeg")
            #expect(data.withUnsafeBytes { JPEGMarkers($0) }.sampleEighthsPerPixel == eighths, "\(name)")
        }
    }

    @Test("a reduced decode's estimate is the size it decodes: JPEG at its DCT scale, WebP at its scaled size, each as the decode delivers")
    func reducedEstimates() throws {
        let photo = try Self.photo(width: 1600, height: 1200)
        var options = DecodingOptions()
        options.targetSize = PixelSize(width: 150, height: 150)
        options.targetMode = .fit
        for (data, format) in [(try JPEGEncoder(quality: 80).encode(photo), ImageFormat.jpeg), (try WebPEncoder(quality: 80).encode(photo), .webp)] {
            let estimate = DecoderRegistry.standard().estimate(data, options: options)
            let decoded = try DecoderRegistry.standard().decode(data, options: options)
            let size = try #require(estimate.decodedSize, "\(format)")
            #expect((size.width, size.height) == (decoded.width, decoded.height), "\(format)")
            #expect(decoded.width < 1600 && (estimate.width, estimate.height) == (1600, 1200))
            // The output, and the few rows libwebp keeps or the DC value of each block Imago's DC
            // decoder keeps (2 bytes a block a component): nowhere near the full size's 7.7 MB.
            #expect(estimate.bytes >= decoded.width * decoded.height * 4 && estimate.bytes < decoded.width * decoded.height * 4 + 1600 * 1200 / 8)
        }
    }

    @Test(
        "a progressive JPEG at 1/8 reserves Imago's DC decode, not libjpeg's coefficient buffers; a damaged one is decoded by libjpeg-turbo when the budget has room for them, refused as memory when not"
    )
    func progressiveAtEighth() async throws {
        let data = try JPEGEncoder(quality: 85, progressive: true).encode(try Self.photo(width: 2400, height: 1600))
        var options = DecodingOptions()
        options.targetSize = PixelSize(width: 300, height: 300)
        options.targetMode = .fit
        let estimate = DecoderRegistry.standard().estimate(data, options: options)
        #expect(estimate.decodedSize == PixelSize(width: 300, height: 200))
        // The output and a DC value per block: nowhere near the coefficients' 2400 × 1600 × 1.5 × 2 bytes.
        let coefficients = 2400 * 1600 * 3
        #expect(estimate.bytes >= 300 * 200 * 4 && estimate.bytes < 300 * 200 * 4 + coefficients / 8)
        // Cut inside its first (DC) scan: Imago's DC decoder refuses it, libjpeg-turbo reads what is there.
        let firstScan = try #require((2..<data.count - 1).first { data[$0] == 0xFF && data[$0 + 1] == 0xDA })
        let damaged = data.prefix(firstScan + 400)
        options.reservedBytes = estimate.bytes
        #expect {
            try DecoderRegistry.standard().decode(damaged, options: options)
        } throws: { error in
            guard case .reservedBytes(let reserved, let needed)? = (error as? ImagoError)?.code.limit else { return false }
            return reserved == estimate.bytes && needed >= coefficients
        }
        options.reservedBytes = nil
        #expect(try DecoderRegistry.standard().decode(damaged, options: options).width == 300)
        // Through the pipeline: the difference reserved for the one decode, then given back.
        for (budgetBytes, decodes) in [(32 << 20, true), (4 << 20, false)] {
            let budget = DecodeMemoryBudget(bytes: budgetBytes)
            try await withOrigin(configure: { $0.decodeMemoryBudget = budget }) { origin, pipeline in
                let request = ImageRequest(url: origin.serve(Data(damaged), at: "/damaged.jpg"), thumbnail: .init(maxPixelSize: 300))
                do {
                    let response = try await pipeline.response(for: request)
                    #expect(decodes && response.image.width == 300)
                } catch {
                    let limit = (error as? ImagoError)?.code.limit
                    #expect(!decodes && limit.map { if case .reservedBytes = $0 { true } else { false } } == true, "\(error)")
                }
                #expect(budget.held == 0)
            }
        }
    }

    @Test("a request with holdsMemory keeps its share of the budget past delivery until released or dropped; one without gives all back")
    func holdsMemory() async throws {
        let budget = DecodeMemoryBudget(bytes: 64 << 20)
        try await withOrigin(configure: { $0.decodeMemoryBudget = budget }) { origin, pipeline in
            let url = origin.serve(try Corpus.data("jpeg/video-001.jpeg"), at: "/a.jpg")
            let grey = ImageProcessors.Grayscale()
            let plain = try await pipeline.response(for: ImageRequest(url: url, options: [.disableMemoryCacheWrites], processors: [grey]))
            #expect(plain.memoryHold == nil && budget.held == 0)
            var held: ImageResponse? = try await pipeline.response(
                for: ImageRequest(url: url, options: [.disableMemoryCacheWrites, .holdsMemory], processors: [grey]))
            // A processor without its own figure: the decode's size again, 150 × 103 × 4, and the
            // source's bytes, which the response keeps.
            let hold = try #require(held?.memoryHold)
            #expect(hold.bytes == 150 * 103 * 4 + (try Corpus.data("jpeg/video-001.jpeg").count) && budget.held == hold.bytes)
            // An encode through the CPU stage that holds it reserves only what the hold lacks, and releases both.
            let encoded = try await pipeline.runOnCPUStage(reserving: hold.bytes + 1000, holding: hold) { budget.held }
            #expect(encoded == hold.bytes + 1000 && budget.held == 0)
            hold.release()
            #expect(budget.held == 0)
            held = try await pipeline.response(
                for: ImageRequest(url: url, options: [.disableMemoryCacheWrites, .holdsMemory], processors: [grey]))
            #expect(budget.held > 0)
            held = nil
            #expect(held == nil && budget.held == 0)
        }
    }

    /// A `width × height` picture with detail (not flat), so encoders write real photos' structure.
    static func photo(width: Int, height: Int) throws -> Image {
        var pixels = [UInt8](repeating: 255, count: width * height * 4)
        for y in 0..<height {
            for x in 0..<width {
                let at = (y * width + x) * 4
                (pixels[at], pixels[at + 1], pixels[at + 2]) = (UInt8((x * 7 + y * 3) & 255), UInt8((x ^ y) & 255), UInt8((x * y) >> 6 & 255))
            }
        }
        let metadata = ImageMetadata(format: .png, originalWidth: width, originalHeight: height, orientationApplied: .up, hasAlpha: false)
        return Image(width: width, height: height, frames: [Image.Frame(pixels: pixels)], metadata: metadata)
    }

    /// Holds its image until opened, recording that it started: keeps a transfer in its decoding
    /// phase while another handle joins it.
    final class GateProcessor: ImageProcessing, @unchecked Sendable {
        let identifier = "test.gate"
        let entered = Atomic<Bool>(false)
        let gate = DispatchSemaphore(value: 0)
        func process(_ image: Image) throws(ImagoError) -> Image {
            entered.store(true, ordering: .releasing)
            gate.wait()
            return image
        }
    }

    /// Records how much of `budget` is held while it runs.
    struct HeldRecorder: ImageProcessing {
        let budget: DecodeMemoryBudget
        let held: Recorder<Int>
        var identifier: String { "test.held" }
        func process(_ image: Image) throws(ImagoError) -> Image {
            held.append(budget.held)
            return image
        }
    }

    @Test("a handle that joins a transfer while its decodes run gets its own decode, reserved in the budget like any other")
    func lateJoiner() async throws {
        let budget = DecodeMemoryBudget(bytes: 64 << 20)
        try await withOrigin(configure: { $0.decodeMemoryBudget = budget }) { origin, pipeline in
            let url = origin.serve(try Corpus.data("jpeg/video-001.jpeg"), at: "/a.jpg")
            let gate = GateProcessor()
            let first = pipeline.imageTask(with: ImageRequest(url: url, options: [.disableMemoryCacheWrites], processors: [gate]))
            while !gate.entered.load(ordering: .acquiring) { await Task.yield() }
            let held = Recorder<Int>()
            let second = pipeline.imageTask(
                with: ImageRequest(url: url, options: [.disableMemoryCacheWrites], processors: [HeldRecorder(budget: budget, held: held)]))
            while pipeline.statistics.coalesced < 1 { await Task.yield() }
            gate.gate.signal()
            _ = try await first.response
            let joined = try await second.response
            #expect(joined.joinedTransfer && origin.log.requests.count == 1)
            // Its decode (150 × 103) and its processing were reserved while it ran; then all given back.
            #expect(held.all.count == 1 && (held.all.first ?? 0) >= 150 * 103 * 4)
            #expect(budget.held == 0)
        }
    }
}
