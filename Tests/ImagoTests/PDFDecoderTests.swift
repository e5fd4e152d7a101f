#if PDF
    import Foundation
    @testable import Imago
    import Testing

    /// PDF documents written by librsvg's `rsvg-convert -f pdf` (three SVG pages of different
    /// sizes, one with no background) and turned by `qpdf --rotate`, rendered by Imago through
    /// Poppler and compared with `pdftoppm` at the same size, with Ghostscript's rendering (another
    /// rasteriser), and with ImageMagick's turn of the unturned page.
    @Suite("PDF decoder")
    struct PDFDecoderTests {
        static let families: Set<ImageFormatInfo.Family> = [.still, .document]

        /// Page 1: 300×225 pt, drawn on a beige ground with text; page 2: 150×375 pt, green; page 3:
        /// 300×225 pt, two shapes on nothing.
        static let pageSVGs = [
            """
            <svg xmlns="http://www.w3.org/2000/svg" width="400" height="300"><rect width="400" height="300" fill="#f0e0c0"/>\
            <circle cx="120" cy="150" r="90" fill="#c03020"/><rect x="230" y="60" width="140" height="180" fill="#2050b0"/>\
            <text x="20" y="40" font-size="28" font-family="DejaVu Sans">Page one</text></svg>
            """,
            """
            <svg xmlns="http://www.w3.org/2000/svg" width="200" height="500"><rect width="200" height="500" fill="#20a040"/>\
            <path d="M10 10 L190 490 M190 10 L10 490" stroke="#000" stroke-width="8"/></svg>
            """,
            """
            <svg xmlns="http://www.w3.org/2000/svg" width="400" height="300"><circle cx="200" cy="150" r="100" fill="#3060d0"/>\
            <rect x="20" y="20" width="60" height="40" fill="#e0a000"/></svg>
            """,
        ]

        /// The three-page document, written by rsvg-convert.
        static func make(in directory: URL) async throws -> URL {
            var svgs: [String] = []
            for (index, text) in pageSVGs.enumerated() {
                let svg = directory.appendingPathComponent("page\(index + 1).svg")
                try Data(text.utf8).write(to: svg)
                svgs.append(svg.path)
            }
            let pdf = directory.appendingPathComponent("three.pdf")
            let run = try await runProcess(URL(fileURLWithPath: "/usr/bin/rsvg-convert"), ["-f", "pdf", "-o", pdf.path] + svgs, withStandardError: true)
            #expect(run.status == 0, "rsvg-convert: \(String(decoding: run.output, as: UTF8.self))")
            return pdf
        }

        /// The document with its first page turned 90° clockwise by qpdf (a `/Rotate` entry).
        static func turned(_ pdf: URL) async throws -> URL {
            let turned = pdf.deletingLastPathComponent().appendingPathComponent("turned.pdf")
            try await runTool("/usr/bin/qpdf", ["--rotate=+90:1", pdf.path, turned.path])
            return turned
        }

        /// Page `page` (from 1) as `pdftoppm -cropbox` renders it at `width × height` as stored.
        static func pdftoppm(_ pdf: URL, page: Int, width: Int, height: Int) async throws -> Image {
            let root = pdf.deletingLastPathComponent().appendingPathComponent("reference-\(UUID().uuidString)")
            try await runTool(
                "/usr/bin/pdftoppm",
                [
                    "-q", "-cropbox", "-f", "\(page)", "-l", "\(page)", "-scale-to-x", "\(width)", "-scale-to-y", "\(height)", "-png", "-singlefile", pdf.path,
                    root.path,
                ])
            let png = URL(fileURLWithPath: root.path + ".png")
            defer { try? FileManager.default.removeItem(at: png) }
            return try PNGDecoder().decode(try Data(contentsOf: png), options: DecodingOptions())
        }

        /// Page `page` as Ghostscript renders it fitted to `width × height`.
        static func ghostscript(_ pdf: URL, page: Int, width: Int, height: Int) async throws -> Image {
            let png = pdf.deletingLastPathComponent().appendingPathComponent("gs-\(UUID().uuidString).png")
            defer { try? FileManager.default.removeItem(at: png) }
            try await runTool(
                "/usr/bin/gs",
                [
                    "-q", "-dSAFER", "-dBATCH", "-dNOPAUSE", "-sDEVICE=png16m", "-dUseCropBox", "-dFIXEDMEDIA", "-dPDFFitPage", "-g\(width)x\(height)",
                    "-dFirstPage=\(page)", "-dLastPage=\(page)", "-dTextAlphaBits=4", "-dGraphicsAlphaBits=4", "-o", png.path, pdf.path,
                ])
            return try PNGDecoder().decode(try Data(contentsOf: png), options: DecodingOptions())
        }

        static func decode(_ data: Data, _ configure: (inout DecodingOptions) -> Void = { _ in }) throws -> Image {
            var options = DecodingOptions()
            configure(&options)
            return try DecoderRegistry.standard(families: families).decode(data, options: options)
        }

        @Test("a page is rendered at the size asked: pdftoppm's pixels, within mean 1 of Ghostscript's, which a 2-pixel shift is not")
        func pageAtSize() async throws {
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let pdf = try await Self.make(in: directory)
            let data = try Data(contentsOf: pdf)
            #expect(DecoderRegistry.standard(families: Self.families).decoder(for: data)?.format == .pdf)
            #expect(DecoderRegistry.standard().decoder(for: data) == nil, "PDF is read only when its family is asked for")

            // Rendered up (vectors scale without loss), not scaled from 72 dpi.
            let image = try Self.decode(data) { $0.targetSize = PixelSize(width: 600, height: 450) }
            #expect((image.width, image.height) == (600, 450))
            #expect((image.metadata.originalWidth, image.metadata.originalHeight) == (300, 225))
            #expect(image.metadata.pdf == PDFInfo(pageCount: 3, firstPage: 0, pagesRendered: 1))
            #expect(!image.metadata.hasAlpha)
            let expected = try await Self.pdftoppm(pdf, page: 1, width: 600, height: 450)
            #expect(Corpus.maxDifference(image, expected) <= 1)

            let gs = try await Self.ghostscript(pdf, page: 1, width: 600, height: 450)
            let difference = Self.meanDifference(image, gs)
            #expect(difference < 1, "mean difference from Ghostscript: \(difference)")
            #expect(Self.meanDifference(image, gs, shift: 2) > 2 * max(difference, 0.5), "the tolerance must catch a 2-pixel shift")

            // Down, fitted.
            let small = try Self.decode(data) {
                $0.targetSize = PixelSize(width: 100, height: 100)
                $0.targetMode = .fit
            }
            #expect((small.width, small.height) == (100, 75))
            #expect(Corpus.maxDifference(small, try await Self.pdftoppm(pdf, page: 1, width: 100, height: 75)) <= 1)
        }

        @Test("page chooses a page, past the last the last; pages stacks them top to bottom at one scale, aligned left")
        func pageSelection() async throws {
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let pdf = try await Self.make(in: directory)
            let data = try Data(contentsOf: pdf)

            let second = try Self.decode(data) { $0.pages = PageSelection(first: 1) }
            #expect((second.width, second.height) == (150, 375))
            #expect(Corpus.maxDifference(second, try await Self.pdftoppm(pdf, page: 2, width: 150, height: 375)) <= 1)
            #expect(second.metadata.pdf?.firstPage == 1)

            let past = try Self.decode(data) { $0.pages = PageSelection(first: 7) }
            #expect(past.metadata.pdf == PDFInfo(pageCount: 3, firstPage: 2, pagesRendered: 1))
            #expect((past.width, past.height) == (300, 225))

            // Pages 1 and 2 at twice their size: 600 wide (page 1), 450 + 750 high.
            let stacked = try Self.decode(data) {
                $0.pages = PageSelection(first: 0, count: 2)
                $0.targetSize = PixelSize(width: 600, height: 1200)
            }
            #expect((stacked.width, stacked.height) == (600, 1200))
            #expect(stacked.metadata.pdf == PDFInfo(pageCount: 3, firstPage: 0, pagesRendered: 2))
            #expect(stacked.metadata.hasAlpha)
            let top = try await Self.pdftoppm(pdf, page: 1, width: 600, height: 450)
            let bottom = try await Self.pdftoppm(pdf, page: 2, width: 300, height: 750)
            #expect(Corpus.maxDifference(Self.crop(stacked, x: 0, y: 0, width: 600, height: 450), top) <= 1)
            #expect(Corpus.maxDifference(Self.crop(stacked, x: 0, y: 450, width: 300, height: 750), bottom) <= 1)
            // Beside the narrower page: nothing.
            let beside = Self.crop(stacked, x: 300, y: 450, width: 300, height: 750)
            #expect(beside.pixels.allSatisfy { $0 == 0 })
        }

        @Test("a page turned by /Rotate is shown upright: pdftoppm's, and ImageMagick's turn of the unturned page")
        func turnedPage() async throws {
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let pdf = try await Self.make(in: directory)
            let turned = try await Self.turned(pdf)
            let image = try Self.decode(try Data(contentsOf: turned)) { $0.targetSize = PixelSize(width: 300, height: 400) }
            #expect((image.width, image.height) == (300, 400))
            #expect((image.metadata.originalWidth, image.metadata.originalHeight) == (225, 300))
            // pdftoppm's sides are the page's before its rotation.
            #expect(Corpus.maxDifference(image, try await Self.pdftoppm(turned, page: 1, width: 400, height: 300)) <= 1)
            let flat = directory.appendingPathComponent("flat.png"), rotated = directory.appendingPathComponent("rotated.png")
            try PNGEncoder().encode(try Self.decode(try Data(contentsOf: pdf)) { $0.targetSize = PixelSize(width: 400, height: 300) }).write(to: flat)
            // Splash draws the turned page on its own pixel grid, so edges differ; the turn's
            // direction shows in the mean (the other way round is far off).
            var means: [Double] = []
            for degrees in ["90", "-90"] {
                try await runTool("/usr/bin/convert", [flat.path, "-rotate", degrees, rotated.path])
                means.append(Self.meanDifference(image, try PNGDecoder().decode(try Data(contentsOf: rotated), options: DecodingOptions())))
            }
            #expect(means[0] < 2 && means[1] > 10 * means[0], "mean difference from ImageMagick's turns by 90 and -90: \(means)")
        }

        @Test("with no background a page is transparent where it paints nothing; by default it is on white")
        func background() async throws {
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let data = try Data(contentsOf: try await Self.make(in: directory))
            let white = try Self.decode(data) { $0.pages = PageSelection(first: 2) }
            #expect(white.pixels.enumerated().allSatisfy { $0.offset % 4 != 3 || $0.element == 255 })
            #expect(Array(white.pixels[0..<4]) == [255, 255, 255, 255])
            let clear = try Self.decode(data) {
                $0.pages = PageSelection(first: 2)
                $0.pdfTransparentBackground = true
            }
            #expect((clear.width, clear.height) == (300, 225))
            #expect(clear.metadata.hasAlpha)
            #expect(clear.pixels[3] == 0, "a corner the page does not paint")
            let centre = (112 * 300 + 150) * 4
            #expect(Array(clear.pixels[centre..<(centre + 4)]) == Array(white.pixels[centre..<(centre + 4)]), "the circle, opaque, alike")
        }

        @Test("a document Poppler cannot read, or one past the deadline, is an error; damaged copies never crash")
        func failures() async throws {
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let data = try Data(contentsOf: try await Self.make(in: directory))
            #expect {
                try Self.decode(Data("%PDF-1.7\nnot a document at all\n".utf8))
            } throws: { error in
                (error as? ImagoError)?.description.contains("PDF: Poppler could not open the document") == true
            }
            #expect {
                try Self.decode(data) { $0.maxDecodeDuration = .nanoseconds(1) }
            } throws: { error in
                (error as? ImagoError)?.code == .timedOut
            }
            // Over the pixel limit as rendered: refused before Poppler renders it.
            #expect {
                try Self.decode(data) {
                    $0.targetSize = PixelSize(width: 30_000, height: 22_500)
                    $0.maxPixels = 10_000_000
                }
            } throws: { error in
                if case .imageTooLarge = (error as? ImagoError)?.code.kind { return true }
                return false
            }
            expectCleanFailures(PDFDecoder(), data.prefix(3_000), truncatedBelow: 3_000)
        }

        @Test("a child process is killed at its deadline and when it writes too much, and its heap is bounded")
        func childProcess() throws {
            let sleeper = ChildProcess(
                path: "/bin/sleep", arguments: ["30"], maxOutput: 10, maxHeap: 0, deadline: CLibraryCall.deadline(after: .milliseconds(200)))
            #expect(sleeper.run(input: Data()) == .timedOut)
            #expect(Self.children(named: "sleep").isEmpty, "the killed child was waited for")

            let input = Data((0..<200_000).map { UInt8(truncatingIfNeeded: $0) })
            let cat = ChildProcess(path: "/bin/cat", arguments: [], maxOutput: 300_000, maxHeap: 0, deadline: CLibraryCall.deadline(after: .seconds(30)))
            #expect(cat.run(input: input) == .exited(status: 0, output: input))
            var short = cat
            short.maxOutput = 100_000
            #expect(short.run(input: input) == .outputTooLarge)

            let hungry = ChildProcess(
                path: ObjectStorePeer.python.path, arguments: ["-c", "x = bytearray(256 << 20)"], maxOutput: 4096, maxHeap: 64 << 20,
                deadline: CLibraryCall.deadline(after: .seconds(30)))
            guard case .exited(let status, _) = hungry.run(input: Data()) else {
                Issue.record("python did not exit")
                return
            }
            #expect(status != 0, "256 MB past a 64 MB heap limit")
            #expect(
                ChildProcess(path: "/nonexistent/tool", arguments: [], maxOutput: 1, maxHeap: 0, deadline: 0).run(input: Data())
                    == .exited(status: 127, output: Data()))
        }

        @Test("pdfinfo's text: the last line of each key wins, so a title cannot forge a page")
        func pageList() throws {
            let text = """
                Title:           x
                Pages:           9
                Page    1 CropBox:       0.00     0.00   9999.00   9999.00
                Pages:           2
                Encrypted:       no
                Page    1 size:  612 x 792 pts (letter)
                Page    1 rot:   270
                Page    1 MediaBox:      0.00     0.00   612.00   792.00
                Page    1 CropBox:      10.00    20.00   602.00   782.00
                Page    2 rot:   45
                Page    2 CropBox:       0.00     0.00   100.50   50.25
                Page    3 CropBox:       0.00     0.00   100.00   100.00
                """
            let list = try #require(PDFPageList(Data(text.utf8)))
            #expect(list.pageCount == 2)
            #expect(list.pages.count == 2, "page 3 is past the page count")
            #expect(list.pages[0] == PDFPageList.Page(number: 1, width: 592, height: 762, rotation: 270))
            #expect(list.pages[0].upright == (762, 592))
            #expect(list.pages[1].rotation == 0)
            #expect(PDFPageList(Data("Pages: 0\n".utf8)) == nil)
            #expect(PDFPageList(Data("Pages: 1\nPage 1 CropBox: 0 0 nan 5\n".utf8)) == nil)
            #expect(PDFPageList(Data("Pages: 1\nPage 1 CropBox: 0 0 1e12 5\n".utf8)) == nil)
        }

        /// The processes this one started that are still there, by name.
        static func children(named name: String) -> [Int] {
            let me = getpid()
            let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
            return entries.compactMap(Int.init).filter { pid in
                guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
                    let close = stat.lastIndex(of: ")")
                else { return false }
                let command = stat[stat.index(after: stat.firstIndex(of: "(")!)..<close]
                let fields = stat[stat.index(close, offsetBy: 2)...].split(separator: " ")
                return command == name && fields.count > 1 && Int32(fields[1]) == me
            }
        }

        /// The mean absolute difference of the RGB channels, 0…255, `a` read `shift` pixels to the
        /// right of `b` (over the columns both have).
        static func meanDifference(_ a: Image, _ b: Image, shift: Int = 0) -> Double {
            var sum = 0, count = 0
            for row in 0..<a.height {
                for column in 0..<(a.width - shift) {
                    let (i, j) = ((row * a.width + column + shift) * 4, (row * b.width + column) * 4)
                    for channel in 0..<3 { sum += abs(Int(a.pixels[i + channel]) - Int(b.pixels[j + channel])) }
                    count += 3
                }
            }
            return Double(sum) / Double(max(1, count))
        }

        static func crop(_ image: Image, x: Int, y: Int, width: Int, height: Int) -> Image {
            var pixels: [UInt8] = []
            pixels.reserveCapacity(width * height * 4)
            for row in y..<(y + height) {
                let start = (row * image.width + x) * 4
                pixels += image.pixels[start..<(start + width * 4)]
            }
            return Image(width: width, height: height, frames: [.init(pixels: pixels)], metadata: image.metadata)
        }
    }
#endif
