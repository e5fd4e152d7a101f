import Foundation
import Imago
import Testing

@testable import ImagoServer

/// The options imgproxy's open-source build has beyond resizing: each one parsed by its full and
/// short name, part of the variant key, and the picture it makes.
@Suite("imgproxy's other processing options")
struct ImgproxyOptionsTests {
    @Test("every option's full and short names parse to the same value")
    func names() throws {
        let pairs: [([String], [String])] = [
            (["min-width:10", "min-height:20"], ["mw:10", "mh:20"]),
            (["zoom:2:3"], ["z:2:3"]),
            (["extend:1:so:4:5"], ["ex:t:so:4:5"]),
            (["extend_aspect_ratio:1:nowe"], ["exar:1:nowe"]),
            (["extend_ar:1:nowe"], ["exar:1:nowe"]),
            (["crop:100:0.5:soea"], ["c:100:0.5:soea"]),
            (["trim:20:ff00ff:1:0"], ["t:20:ff00ff:1:0"]),
            (["padding:1:2:3:4"], ["pd:1:2:3:4"]),
            (["auto_rotate:0", "rotate:270", "flip:1:0"], ["ar:0", "rot:-90", "fl:1:0"]),
            (["background:255:0:128"], ["bg:ff0080"]),
            (["sharpen:0.5", "pixelate:4"], ["sh:0.5", "pix:4"]),
            (["watermark:0.5:re:10:20:0.2"], ["wm:0.5:re:10:20:0.2"]),
            (["format_quality:webp:50:jpg:60", "max_bytes:1000"], ["fq:webp:50:jpeg:60", "mb:1000"]),
            (["skip_processing:gif:jpg", "cachebuster:abc"], ["skp:gif:jpeg", "cb:abc"]),
            (["max_src_resolution:1.5", "max_src_file_size:100", "max_animation_frames:3"], ["msr:1.5", "msfs:100", "maf:3"]),
            (["max_animation_frame_resolution:0.5", "max_result_dimension:300"], ["mafr:0.5", "mrd:300"]),
            (["enforce_thumbnail:1", "preserve_hdr:1", "raw:1"], ["eth:1", "ph:1", "raw:1"]),
            (["filename:photo", "return_attachment:1", "expires:0"], ["fn:photo", "att:1", "exp:0"]),
        ]
        for (full, short) in pairs {
            let a = try ProcessingOptions(parsing: full), b = try ProcessingOptions(parsing: short)
            #expect(a == b, "\(full)")
            #expect(a != ProcessingOptions(), "\(full) changes nothing")
        }
    }

    @Test("arguments are read as imgproxy reads them")
    func argumentRules() throws {
        let padding = try ProcessingOptions(parsing: ["pd:10"]).padding
        #expect((padding.top, padding.right, padding.bottom, padding.left) == (10, 10, 10, 10))
        let two = try ProcessingOptions(parsing: ["pd:1:2"]).padding
        #expect((two.top, two.right, two.bottom, two.left) == (1, 2, 1, 2))
        let three = try ProcessingOptions(parsing: ["pd:1:2:3"]).padding
        #expect((three.top, three.right, three.bottom, three.left) == (1, 2, 3, 2))
        #expect(try ProcessingOptions(parsing: ["z:1.5"]).zoom == .init(x: 1.5, y: 1.5))
        #expect(try ProcessingOptions(parsing: ["bg:fff"]).background == RGBAColor.white)
        #expect(try ProcessingOptions(parsing: ["bg:fff", "bg:"]).background == nil)
        #expect(try ProcessingOptions(parsing: ["rot:450"]).rotate == 90)
        let resize = try ProcessingOptions(parsing: ["rs:fill:300:200:1:1:so"])
        #expect(resize.extend == .init(enabled: true, gravity: Gravity(.south)) && resize.enlarge)
        #expect(try ProcessingOptions(parsing: ["s:300:200:0:1"]).extend.enabled)
        #expect(try ProcessingOptions(parsing: ["wm:0"]).watermark == nil)
        let mark = try #require(try ProcessingOptions(parsing: ["wm:0.5:soea:10:-5"]).watermark)
        #expect(mark.opacity == 0.5 && mark.position == Gravity(.southEast, x: 10, y: -5) && mark.scale == 0)
        #expect(try ProcessingOptions(parsing: ["fn:cGhvdG8:1"]).delivery.filename == "photo")
        #expect(try ProcessingOptions(parsing: ["fn:my%20photo"]).delivery.filename == "my photo")
        #expect(try ProcessingOptions(parsing: ["msr:1.5"]).maxSourcePixels == 1_500_000)
        #expect(try ProcessingOptions(parsing: ["c:0:0"]).crop == nil)
        #expect(try ProcessingOptions(parsing: ["skp:jpg:jpeg:gif"]).skipProcessing == ["jpeg", "gif"])
    }

    @Test("an expires in the past is a 404; in the future or 0 it parses, and is not part of the variant key")
    func expires() throws {
        #expect {
            try ProcessingOptions(parsing: ["exp:1000"], now: 2000)
        } throws: { ($0 as? ServerError)?.status == 404 }
        let later = try ProcessingOptions(parsing: ["exp:3000"], now: 2000)
        #expect(later.delivery.expires == 3000 && later.key == ProcessingOptions().key)
        #expect(try ProcessingOptions(parsing: ["exp:0"], now: 2000).delivery.expires == nil)
    }

    @Test("the variant key changes with every option that changes the picture, and with none that does not")
    func keys() throws {
        let segments = [
            "rs:fill:300:200", "mw:10", "mh:10", "z:2", "dpr:2", "el:1", "ex:1", "exar:1", "g:sm", "c:10:10", "t:5", "pd:3", "ar:0", "rot:90",
            "fl:1", "bg:000", "bl:1", "sh:1", "pix:3", "wm:0.5", "q:50", "fq:webp:30", "mb:100", "f:png", "scp:0", "sm:0", "kcr:0", "ph:1",
            "eth:1", "skp:gif", "raw:1", "cb:x", "msr:1", "msfs:10", "maf:2", "mafr:1", "mrd:100", "rs:fit:0:0:0:1:so",
        ]
        var seen: Set<String> = [ProcessingOptions().key]
        for segment in segments {
            let key = try ProcessingOptions(parsing: [segment]).key
            #expect(!seen.contains(key), "\(segment) does not change the key")
            seen.insert(key)
        }
        for delivery in ["fn:a", "att:1", "exp:99999999999"] { #expect(try ProcessingOptions(parsing: [delivery]).key == ProcessingOptions().key) }
    }
}
