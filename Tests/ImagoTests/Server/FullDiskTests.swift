import Foundation
import Imago
import ImagoTestSupport
import Testing

@testable import ImagoServer

/// A disk cache on a full file system (a 1 MB tmpfs, filled): new variants are still answered,
/// and after a restart on the same folder every answer is whole.
@Suite("imago serve on a full cache disk", .timeLimit(.minutes(6)))
struct FullDiskTests {
    @Test("with no space left the server still answers new variants, and after a restart nothing half-written is served")
    func fullDisk() async throws {
        let mountPoint = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: mountPoint) }
        let mounted = try await runProcess(URL(fileURLWithPath: "/bin/mount"), ["-t", "tmpfs", "-o", "size=1m", "tmpfs", mountPoint.path])
        // The suite runs as root, as CI does; the mount is what makes the disk full for real.
        try #require(mounted.status == 0, "mount -t tmpfs failed: the test needs root")
        defer { _ = try? runUnmount(mountPoint) }
        let cache = mountPoint.appendingPathComponent("cache")
        // A local source, so the variants' keys are the same in both processes.
        let root = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        try Corpus.data("jpeg/video-001.jpeg").write(to: root.appendingPathComponent("photo.jpg"))
        let source = "local:///photo.jpg"
        let widths = [20, 30, 40, 50, 60, 70]
        var first: [Int: Data] = [:]
        try await withServer({
            $0.cacheDirectory = cache
            $0.localRoot = root
        }) { server in
            // The index exists; now fill what is left of the disk.
            let filler = mountPoint.appendingPathComponent("filler")
            try #require(FileManager.default.createFile(atPath: filler.path, contents: nil))
            let handle = try FileHandle(forWritingTo: filler)
            let block = Data(count: 4096)
            while (try? handle.write(contentsOf: block)) != nil {}
            try? handle.close()
            let filled = try FileManager.default.attributesOfItem(atPath: filler.path)[.size] as? Int ?? 0
            #expect(filled > 256 << 10, "the filler took \(filled) bytes before the disk was full")
            for width in widths {
                let answer = try await server.get(ServerHarness.path(source, ["rs:fit:\(width):0"], extension: "png"))
                #expect(answer.status == 200, "width \(width)")
                #expect(try DecoderRegistry.standard().decode(answer.body).width == width)
                first[width] = answer.body
            }
            try FileManager.default.removeItem(at: filler)
        }
        // A new process on the same folder: whatever reached the disk reads back whole, the rest is made again.
        try await withServer({
            $0.cacheDirectory = cache
            $0.localRoot = root
        }) { server in
            for width in widths {
                let answer = try await server.get(ServerHarness.path(source, ["rs:fit:\(width):0"], extension: "png"))
                #expect(answer.status == 200)
                #expect(answer.body == first[width], "width \(width)")
            }
        }
    }

    private func runUnmount(_ mountPoint: URL) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/umount")
        process.arguments = [mountPoint.path]
        try process.run()
        process.waitUntilExit()
    }
}
