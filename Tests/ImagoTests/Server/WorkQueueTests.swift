import AsyncHTTPClient
import Foundation
import Glibc
import Imago
import ImagoTestSupport
import Testing

@testable import ImagoServer

/// The work queue (`--workers`, `--requests-queue-size`, imgproxy's `IMGPROXY_WORKERS` and
/// `IMGPROXY_REQUESTS_QUEUE_SIZE`) and the connection limit (`--max-clients`).
@Suite("work queue and client limit")
struct WorkQueueTests {
    @Test("places first, then the line in arrival order; full past its length; an abandoned or cancelled waiter leaves, a place given to it goes on")
    func queueRules() async throws {
        let queue = WorkQueue(workers: 1, lineLength: 2)
        let first = try queue.enter()
        let second = try queue.enter()
        let third = try queue.enter()
        #expect(!first.queued && second.queued && third.queued && queue.queued == 2)
        #expect(throws: WorkQueue.Full.self) { try queue.enter() }
        let order = Locked<[Int]>([])
        let waitingThird = Task {
            try await queue.turn(third)
            order.withLock { $0.append(3) }
            queue.release()
        }
        let waitingSecond = Task {
            try await queue.turn(second)
            order.withLock { $0.append(2) }
            queue.release()
        }
        queue.release()
        try await waitingSecond.value
        try await waitingThird.value
        #expect(order.withLock { $0 } == [2, 3])
        await queue.untilIdle()
        #expect(queue.inFlight == 0 && queue.queued == 0)

        // Abandoned while waiting: it leaves the line and its waiter fails.
        let running = try queue.enter()
        let abandoned = try queue.enter()
        let waiting = Task { try await queue.turn(abandoned) }
        #expect(queue.abandon(abandoned))
        await #expect(throws: CancellationError.self) { try await waiting.value }
        #expect(queue.queued == 0)
        // Given a place before it began to wait, then abandoned: the place goes on (here: free).
        let granted = try queue.enter()
        queue.release()
        #expect(queue.queued == 0 && queue.inFlight == 1)
        #expect(queue.abandon(granted))
        #expect(queue.inFlight == 0)
        // A running place is not abandoned.
        let takesTheFreePlace = try queue.enter()
        #expect(!queue.abandon(running) && !queue.abandon(takesTheFreePlace))
        // A waiting task that is cancelled leaves the line.
        let cancelled = try queue.enter()
        let task = Task { try await queue.turn(cancelled) }
        await queue.untilQueued(1)
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(queue.queued == 0)
        queue.release()
        await queue.untilIdle()
    }

    @Test("a client that closes its connection while its request waits takes it out of the queue: the source is never fetched")
    func closedClientLeavesQueue() async throws {
        try await withServer({
            $0.workers = 1
            $0.requestsQueueSize = 4
        }) { server in
            var route = TestOrigin.Route(body: try Corpus.data("jpeg/video-001.jpeg"))
            route.gate = "held"
            server.origin.setRoute("/held.jpg", route)
            let queued = server.origin.serve(try Corpus.data("png/basn2c08.png"), at: "/queued.png")
            async let held = server.get(ServerHarness.path(server.origin.url("/held.jpg").absoluteString, ["w:50"]))
            await server.origin.wait { $0.requests(to: "/held.jpg").count == 1 }
            let socket = try #require(server.sendRequest(ServerHarness.path(queued.absoluteString, ["w:20"])))
            await server.service.untilQueued(1)
            close(socket)
            await server.service.untilQueued(0)
            server.origin.release("held")
            #expect(try await held.status == 200)
            await server.service.untilNoWork()
            #expect(server.origin.log.requests(to: "/queued.png").isEmpty)
            // The same image asked again is made: the abandoned request left nothing behind.
            #expect(try await server.get(ServerHarness.path(queued.absoluteString, ["w:20"])).status == 200)
            let metrics = String(decoding: try await server.get("/metrics").body, as: UTF8.self)
            #expect(metrics.contains("imago_serve_requests_queued 0") && metrics.contains("imago_serve_queue_wait_seconds_count"))
        }
    }

    @Test("thumbor's URLs with every worker busy and the queue full: 503 with Retry-After (thumbor has no 429)")
    func thumborQueueFull() async throws {
        try await withServer({
            $0.dialect = .thumbor
            $0.workers = 1
            $0.requestsQueueSize = 0
        }) { server in
            var route = TestOrigin.Route(body: try Corpus.data("jpeg/video-001.jpeg"))
            route.gate = "held"
            let held = server.origin.url("/held.jpg")
            server.origin.setRoute("/held.jpg", route)
            let other = server.origin.serve(try Corpus.data("png/basn2c08.png"), at: "/other.png")
            let host = "127.0.0.1:\(held.port ?? 0)"
            async let first = server.get("/unsafe/50x0/\(host)/held.jpg")
            await server.origin.wait { $0.requests(to: "/held.jpg").count == 1 }
            let refused = try await server.get("/unsafe/20x0/\(host)\(other.path)")
            #expect(refused.status == 503 && refused.header("Retry-After") == "1")
            server.origin.release("held")
            #expect(try await first.status == 200)
        }
    }

    @Test("--max-clients 1: a second connection is not accepted while the first is open, and is answered once it closes")
    func maxClients() async throws {
        try await withServer({ $0.maxClients = 1 }) { server in
            let first = try #require(server.sendRequest("/health"))
            #expect(await offThePool { Self.readAnswer(first) }.hasPrefix("HTTP/1.1 200"))
            let second = try #require(server.sendRequest("/health"))
            // A request on the first connection goes round the server: the second is still not answered.
            let again = Array("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8)
            #expect(send(first, again, again.count, Int32(MSG_NOSIGNAL)) == again.count)
            #expect(await offThePool { Self.readAnswer(first) }.hasPrefix("HTTP/1.1 200"))
            var probe = [UInt8](repeating: 0, count: 16)
            #expect(recv(second, &probe, probe.count, Int32(MSG_DONTWAIT)) == -1 && errno == EAGAIN)
            close(first)
            #expect(await offThePool { Self.readAnswer(second) }.hasPrefix("HTTP/1.1 200"))
            close(second)
        }
    }

    /// What a blocking read of `socket` gives first (up to 4 KB), 60 s at most. Call it off the
    /// cooperative pool (`offThePool`): the server's handlers need its two threads.
    static func readAnswer(_ socket: Int32) -> String {
        var timeout = timeval(tv_sec: 60, tv_usec: 0)
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = recv(socket, &buffer, buffer.count, 0)
        return count > 0 ? String(decoding: buffer.prefix(count), as: UTF8.self) : ""
    }

    @Test(
        "--workers 2 --requests-queue-size 8 in 256 MB: of 64 cold 12 MP thumbnails at once, 10 are made and 54 are 429 at once; then 64 spread over time are all made",
        .enabled(
            if: ContainerMemoryTests.memoryCgroup != nil && !runsUnderSanitizer, "a sanitizer's shadow memory and quarantine take more than the group's limit"))
    func burstAbsorbedAndShed() async throws {
        let photo = try await ContainerMemoryTests.photos()[0]
        let origin = try await TestOrigin.start()
        var route = TestOrigin.Route(body: photo)
        route.gate = "burst"
        let burst = (0..<64).map { index in
            origin.setRoute("/burst-\(index).jpg", route)
            return ServerHarness.path(origin.url("/burst-\(index).jpg").absoluteString, ["rs:fit:1000:1000"])
        }
        let spread = (0..<64).map { ServerHarness.path(origin.serve(photo, at: "/spread-\($0).jpg").absoluteString, ["rs:fit:1000:1000"]) }
        let answers = try await ContainerMemoryTests.inCgroup(
            megabytes: 256, arguments: ["--workers", "2", "--requests-queue-size", "8", "--timeout", "600"]
        ) { port, client in
            try await withThrowingTaskGroup(of: (Int, Data).self) { group in
                for path in burst { group.addTask { await ContainerMemoryTests.get(path, port: port, client: client) } }
                // Two workers hold their sources at the gate and eight wait: the other 54 are
                // answered while the gate is still closed.
                var answers: [(Int, Data)] = []
                while answers.count < 54, let answer = try await group.next() { answers.append(answer) }
                // The second worker's fetch may reach the origin after the 54 answers: wait for it.
                await origin.wait(until: { $0.requests.count >= 2 }, giveUpAfter: .seconds(60))
                #expect(origin.log.requests.count == 2, "only the two workers fetched")
                #expect(answers.allSatisfy { $0.0 == 429 }, "\(answers.map(\.0))")
                origin.release("burst")
                while let answer = try await group.next() { answers.append(answer) }
                // Then the same number spread over time, never more than the workers and queue hold.
                for start in stride(from: 0, to: spread.count, by: 8) {
                    answers += await ContainerMemoryTests.all(Array(spread[start..<start + 8]), port: port, client: client)
                }
                return answers
            }
        }
        try await origin.shutdown()
        let statuses = answers.map(\.0)
        #expect(statuses.prefix(54).allSatisfy { $0 == 429 } && statuses.dropFirst(54).prefix(10).allSatisfy { $0 == 200 }, "\(statuses)")
        #expect(statuses.suffix(64).allSatisfy { $0 == 200 }, "\(statuses)")
        for (status, body) in answers where status == 200 {
            #expect(try DecoderRegistry.standard().decode(body).width == 1000)
        }
    }
}
