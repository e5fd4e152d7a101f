import Foundation
@testable import Imago
import ImagoTestSupport
import Testing

@Suite("Decode memory budget", .timeLimit(.minutes(3)))
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
        #expect(jpeg == DecodeEstimate(width: 150, height: 103, bytes: 150 * 103 * 8))
        let progressive = DecoderRegistry.standard().estimate(try Corpus.data("jpeg/video-001.progressive.jpeg"), options: options)
        #expect(progressive.bytes == 150 * 103 * 14)
        let gif = DecoderRegistry.standard().estimate(try HostileFiles.data("gif-frame-outside-canvas.gif"), options: options)
        #expect(gif == DecodeEstimate(width: 10, height: 10, bytes: 3 * 400))
        let webp = DecoderRegistry.standard().estimate(try HostileFiles.data("webp-timestamps-past-int32.webp"), options: options)
        #expect(webp == DecodeEstimate(width: 1, height: 1, bytes: 132 * 4))
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
}
