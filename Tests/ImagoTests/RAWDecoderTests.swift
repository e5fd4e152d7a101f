#if RAW
    import Foundation
    @testable import Imago
    import Testing

    /// DNG files written by PyPI's PiDNG (`Tests/Peers/make_dng.py`: a wallpaper sampled into a
    /// Bayer mosaic, and a JPEG preview as the file's second directory), decoded by Imago through
    /// LibRaw and compared with LibRaw's own `dcraw_emu` (libraw-bin) and with the preview
    /// `exiftool -b -ThumbnailImage` extracts.
    @Suite("Camera RAW decoder")
    struct RAWDecoderTests {
        static let rawFamilies: Set<ImageFormatInfo.Family> = [.still, .raw]
        static let wallpaper = "/usr/share/backgrounds/2004default.jpg"
        static let script = ObjectStorePeer.project.appendingPathComponent("Tests/Peers/make_dng.py").path

        /// A 600×400 DNG (sensor data as stored), turned by `orientation`, with a 300×200 preview when asked.
        static func make(in directory: URL, orientation: Int = 1, preview: Bool = false) async throws -> URL {
            let file = directory.appendingPathComponent("picture-\(orientation)-\(preview).dng")
            var arguments = [script, wallpaper, file.path, "600", "400", "--orientation", "\(orientation)"]
            if preview {
                let jpeg = directory.appendingPathComponent("preview.jpg")
                try await runTool("/usr/bin/convert", [wallpaper, "-resize", "300x200!", "-quality", "85", jpeg.path])
                arguments += ["--preview", jpeg.path, "300", "200"]
            }
            let run = try await runProcess(ObjectStorePeer.python, arguments, withStandardError: true)
            #expect(run.status == 0, "make_dng.py: \(String(decoding: run.output, as: UTF8.self))")
            return file
        }

        /// LibRaw's `dcraw_emu` with the camera's white balance (`-w`) and sRGB's curve (`-g 2.4 12.92`),
        /// at half size with `-h`, as a TIFF; its pixels as stored, or converted to sRGB from the
        /// profile dcraw_emu embeds when `converted`.
        static func dcrawEmu(_ file: URL, half: Bool = false, converted: Bool = false) async throws -> Image {
            try await runTool("/usr/bin/dcraw_emu", ["-w", "-g", "2.4", "12.92"] + (half ? ["-h"] : []) + ["-T", file.path])
            let tiff = URL(fileURLWithPath: file.path + ".tiff")
            defer { try? FileManager.default.removeItem(at: tiff) }
            var options = DecodingOptions()
            if !converted { options.colorProfileHandling = .keep }
            return try TIFFDecoder().decode(try Data(contentsOf: tiff), options: options)
        }

        static func decode(_ data: Data, _ configure: (inout DecodingOptions) -> Void = { _ in }) throws -> Image {
            var options = DecodingOptions()
            configure(&options)
            return try DecoderRegistry.standard(families: rawFamilies).decode(data, options: options)
        }

        @Test("a DNG developed at full size is LibRaw's dcraw_emu's picture in sRGB, turned by its orientation")
        func fullDevelopment() async throws {
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            for orientation in [1, 6, 3] {
                let file = try await Self.make(in: directory, orientation: orientation)
                let data = try Data(contentsOf: file)
                #expect(DecoderRegistry.standard(families: Self.rawFamilies).decoder(for: data)?.format == .dng)
                let image = try Self.decode(data)
                let expected = try await Self.dcrawEmu(file)
                let size = orientation == 6 ? (400, 600) : (600, 400)
                #expect((image.width, image.height) == size)
                #expect((expected.width, expected.height) == size)
                #expect(Corpus.maxDifference(image, expected) <= 1, "orientation \(orientation)")
                // And sRGB indeed: dcraw_emu's pixels converted from the profile it embeds by Little CMS.
                #expect(Corpus.meanDifference(image, try await Self.dcrawEmu(file, converted: true)) <= 1)
                let info = try #require(image.metadata.raw)
                #expect(info.developed == .full)
                #expect((info.make, info.model) == ("Imago", "Test Mosaic"))
                #expect((info.sensorWidth, info.sensorHeight) == (600, 400))
                #expect((image.metadata.originalWidth, image.metadata.originalHeight) == (600, 400))
                #expect(image.metadata.uprightOriginalSize == PixelSize(width: size.0, height: size.1))
            }
        }

        @Test("a size half the sensor covers is developed at half size, as dcraw_emu -h; a larger one at full size")
        func halfDevelopment() async throws {
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let file = try await Self.make(in: directory)
            let data = try Data(contentsOf: file)
            let half = try Self.decode(data) { $0.targetSize = PixelSize(width: 240, height: 160) }
            #expect(half.metadata.raw?.developed == .half)
            let expected = try await Self.dcrawEmu(file, half: true)
            #expect((half.width, half.height) == (300, 200))
            #expect((expected.width, expected.height) == (300, 200))
            #expect(Corpus.maxDifference(half, expected) <= 1)
            let full = try Self.decode(data) { $0.targetSize = PixelSize(width: 320, height: 160) }
            #expect(full.metadata.raw?.developed == .full)
            #expect((full.width, full.height) == (600, 400))
        }

        @Test("the embedded preview serves a size it covers: exiftool's preview bytes, decoded and turned upright")
        func preview() async throws {
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let file = try await Self.make(in: directory, orientation: 6, preview: true)
            let data = try Data(contentsOf: file)
            // exiftool's extraction, turned as the DNG's orientation says by ImageMagick.
            let extracted = directory.appendingPathComponent("extracted.jpg")
            let run = try await runProcess(URL(fileURLWithPath: "/usr/bin/exiftool"), ["-b", "-ThumbnailImage", file.path])
            try run.output.write(to: extracted)
            let turned = directory.appendingPathComponent("turned.png")
            try await runTool("/usr/bin/convert", [extracted.path, "-rotate", "90", turned.path])
            let expected = try PNGDecoder().decode(try Data(contentsOf: turned), options: DecodingOptions())
            #expect((expected.width, expected.height) == (200, 300))

            // The shown picture is 400×600 and its preview 200×300: a request for 150×225 takes the preview.
            let image = try Self.decode(data) {
                $0.targetSize = PixelSize(width: 200, height: 300)
                $0.targetMode = .fit
            }
            #expect(image.metadata.raw?.developed == .preview)
            #expect((image.width, image.height) == (200, 300))
            #expect(Corpus.meanDifference(image, expected) <= 1)
            #expect(image.metadata.uprightOriginalSize == PixelSize(width: 400, height: 600))
            #expect(image.metadata.orientationApplied == .right)
            #expect(image.metadata.raw?.previewWidth == 300)

            // The same bytes as exiftool's.
            let bytes = try RAWFile.open(data, kind: .dng, options: DecodingOptions()) { file throws(ImagoError) in try file.preview(options: DecodingOptions())
            }
            guard case .jpeg(let jpeg) = bytes else {
                Issue.record("no JPEG preview")
                return
            }
            #expect(jpeg == run.output)

            // Larger than the preview (and than half the sensor, 200×300 upright): developed at full size.
            let larger = try Self.decode(data) {
                $0.targetSize = PixelSize(width: 300, height: 450)
                $0.targetMode = .fit
            }
            #expect(larger.metadata.raw?.developed == .full)
            #expect((larger.width, larger.height) == (400, 600))
            // Asked for embedded thumbnails (imgproxy's enforce_thumbnail): the preview at its own size.
            let enforced = try Self.decode(data) { $0.usesEmbeddedThumbnail = true }
            #expect(enforced.metadata.raw?.developed == .preview)
            #expect((enforced.width, enforced.height) == (200, 300))
        }

        @Test("limits hold before LibRaw allocates: pixels, bytes of the development, and the deadline")
        func limits() async throws {
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let data = try Data(contentsOf: try await Self.make(in: directory))
            #expect {
                try Self.decode(data) { $0.maxPixels = 100_000 }
            } throws: { error in
                (error as? ImagoError)?.code.limit == .pixels(100_000)
            }
            // The full development holds about 5.8 MB of LibRaw's buffers: refused at 2 MB, before unpacking.
            #expect {
                try Self.decode(data) { $0.maxDecodedBytes = 2 << 20 }
            } throws: { error in
                (error as? ImagoError)?.code.limit == .decodedBytes(2 << 20)
            }
            #expect {
                try Self.decode(data) { $0.maxDecodeDuration = .zero }
            } throws: { error in
                (error as? ImagoError)?.code == .timedOut
            }
            // The estimate counts LibRaw's development: more than the RGBA result alone.
            let estimate = DecoderRegistry.standard(families: Self.rawFamilies).estimate(data)
            #expect(estimate.format == .dng)
            #expect(estimate.bytes > 600 * 400 * 4)
            #expect((estimate.width, estimate.height) == (600, 400))
        }

        @Test("RAW files are read only when the family is asked for; damaged ones are errors")
        func familyAndDamage() async throws {
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let data = try Data(contentsOf: try await Self.make(in: directory))
            #expect(DecoderRegistry.standard().decoder(for: data)?.format != .dng)
            let truncated = data.prefix(data.count / 3)
            #expect(throws: ImagoError.self) { try Self.decode(Data(truncated)) }
        }

        @Test(
            "each kind is told from its first bytes; a TIFF is not a RAW file",
            arguments: [
                ("cr2-header.cr2", ImageFormat.cr2), ("orf-header.orf", .orf), ("rw2-header.rw2", .rw2), ("raf-header.raf", .raf),
                ("cr3-header.cr3", .cr3), ("nef-header.nef", .nef), ("mosaic.dng", .dng),
            ])
        func sniff(name: String, format: ImageFormat) throws {
            let seeds = ObjectStorePeer.project.appendingPathComponent("Fuzz/seeds/raw")
            let data = try Data(contentsOf: seeds.appendingPathComponent(name))
            #expect(RAWKind.sniff(data)?.format == format)
            #expect(ImageFormat.table.first { $0.format == format }?.family == .raw)
        }

        @Test("a TIFF, and a camera maker's TIFF without sensor data, are TIFF")
        func tiffIsNotRAW() throws {
            let image = Image(
                width: 4, height: 4, frames: [Image.Frame(pixels: [UInt8](repeating: 200, count: 64))],
                metadata: ImageMetadata(format: .tiff, originalWidth: 4, originalHeight: 4, hasAlpha: false))
            let tiff = try TIFFEncoder().encode(image)
            #expect(RAWKind.sniff(tiff) == nil)
            let nikon = Data("NIKON CORPORATION\0".utf8)
            var scan = Data([0x49, 0x49, 0x2A, 0, 8, 0, 0, 0, 1, 0])
            scan += Data([15, 1, 2, 0]) + withUnsafeBytes(of: UInt32(nikon.count).littleEndian) { Data($0) } + Data([26, 0, 0, 0])
            scan += Data([0, 0, 0, 0]) + nikon + Data(count: 32)
            #expect(RAWKind.sniff(scan) == nil)
        }
    }
#endif
