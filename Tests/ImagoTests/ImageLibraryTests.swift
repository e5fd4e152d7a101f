import Foundation
import Imago
import Testing

@Suite("Image library")
struct ImageLibraryTests {
    @Test("save returns an identifier; the image comes back (PNG exactly, JPEG and WebP at its size); list and delete")
    func roundTrip() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let library = try ImageLibrary(directory: directory)
        let image = ProcessingTests.image(width: 30, height: 20, hasAlpha: true) { x, y in (UInt8(x * 8), UInt8(y * 12), 77, UInt8(255 - x)) }
        let png = try library.save(image, format: .png)
        let jpeg = try library.save(image, format: .jpeg, quality: 80)
        let webp = try library.save(image, format: .webp)
        #expect(Set([png, jpeg, webp]).count == 3)

        let back = try #require(try library.image(for: png))
        #expect(back.pixels == image.pixels)
        #expect(try library.image(for: jpeg).map { ($0.width, $0.height, $0.metadata.format) } ?? (0, 0, .gif) == (30, 20, .jpeg))
        #expect(try library.image(for: webp)?.metadata.format == .webp)
        #expect(Set(library.identifiers()) == [png, jpeg, webp])

        // Another library on the same folder (a later launch) sees the same images.
        let reopened = try ImageLibrary(directory: directory)
        #expect(try reopened.image(for: png)?.pixels == image.pixels)

        #expect(library.delete(jpeg))
        #expect(!library.delete(jpeg))
        #expect(try library.image(for: jpeg) == nil)
        #expect(Set(library.identifiers()) == [png, webp])
    }

    @Test("identifiers are checked: a path or a made-up name finds nothing")
    func identifiers() throws {
        #expect(ImageLibrary.Identifier(rawValue: "../../etc/passwd") == nil)
        #expect(ImageLibrary.Identifier(rawValue: String(repeating: "A", count: 32)) == nil)
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let library = try ImageLibrary(directory: directory)
        let unknown = try #require(ImageLibrary.Identifier(rawValue: String(repeating: "a", count: 32)))
        #expect(try library.image(for: unknown) == nil)
        #expect(library.data(for: unknown) == nil)
        #expect(throws: ImagoError.self) { try library.save(ProcessingTests.solid(2, 2), format: .gif) }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
    }

    @Test("concurrent saves: every one gets its own identifier and reads back whole; no temporary file is left")
    func concurrentSaves() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let library = try ImageLibrary(directory: directory)
        let saved = try await withThrowingTaskGroup(of: (ImageLibrary.Identifier, UInt8).self) { group in
            for index in 0..<64 {
                group.addTask {
                    let shade = UInt8(index * 3)
                    return (try library.save(ProcessingTests.solid(16, 16, (shade, 0, 0, 255)), format: .png), shade)
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(Set(saved.map(\.0)).count == 64)
        for (identifier, shade) in saved {
            let pixel = try #require(try library.image(for: identifier)).pixel(x: 5, y: 5)
            #expect(pixel == (shade, 0, 0, 255))
        }
        #expect(library.identifiers().count == 64)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).allSatisfy { !$0.hasPrefix(".") })
    }
}
