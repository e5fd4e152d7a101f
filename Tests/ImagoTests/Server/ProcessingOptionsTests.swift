import Foundation
import ImagoServer
import Testing

@Suite("imgproxy processing options")
struct ProcessingOptionsTests {
    @Test("full and short names set the same options; later ones override; empty arguments keep values")
    func names() throws {
        let full = try ProcessingOptions(parsing: [
            "resize:fill:300:200:1", "gravity:noea:5:6", "quality:70", "format:webp", "blur:2", "dpr:2",
        ])
        let short = try ProcessingOptions(parsing: ["rs:fill:300:200:t", "g:noea:5:6", "q:70", "f:webp", "bl:2", "dpr:2"])
        #expect(full == short)
        #expect((full.resizingType, full.width, full.height, full.enlarge) == (.fill, 300, 200, true))
        #expect((full.gravity, full.quality) == (Gravity(.northEast, x: 5, y: 6), 70))
        #expect((full.format, full.blur, full.dpr) == ("webp", 2, 2))
        let pieces = try ProcessingOptions(parsing: ["s:300:200", "rt:force", "w:50", "height:60", "el:1", "rs::80"])
        #expect((pieces.resizingType, pieces.width, pieces.height, pieces.enlarge) == (.force, 80, 60, true))
        #expect(try ProcessingOptions(parsing: ["g:sm"]).gravity == Gravity(.smart))
        #expect(try ProcessingOptions(parsing: ["g:fp:0.25:0.75"]).gravity == Gravity(.focusPoint, x: 0.25, y: 0.75))
        #expect(try ProcessingOptions(parsing: ["rs:fill-down:10:10", "rt:auto"]).resizingType == .auto)
    }

    @Test("booleans are read as Go's strconv.ParseBool reads them; scp, sm and kcr are parsed and keyed")
    func booleansAndColour() throws {
        for text in ["1", "t", "T", "TRUE", "true", "True"] { #expect(try ProcessingOptions(parsing: ["el:\(text)"]).enlarge, "\(text)") }
        for text in ["0", "f", "F", "FALSE", "false", "False"] {
            #expect(try ProcessingOptions(parsing: ["el:1", "enlarge:\(text)"]).enlarge == false, "\(text)")
        }
        for text in ["yes", "tRUE", "2"] { #expect(throws: ServerError.self) { try ProcessingOptions(parsing: ["el:\(text)"]) } }
        let colour = try ProcessingOptions(parsing: ["scp:0", "sm:False", "kcr:T"])
        #expect(colour.stripColorProfile == false && colour.stripMetadata == false && colour.keepCopyright == true)
        let long = try ProcessingOptions(parsing: ["strip_color_profile:0", "strip_metadata:False", "keep_copyright:T"])
        #expect(colour == long)
        let stripping = try ProcessingOptions(parsing: ["scp:1"])
        #expect(colour.key != ProcessingOptions().key && stripping.key != ProcessingOptions().key && stripping.key != colour.key)
    }

    @Test(
        "an unknown or malformed option is a 400 naming it",
        arguments: [
            ("zz:1", "'zz'"), ("w:abc", "'w'"), ("w:70000", "'w'"), ("rs:stretch:1:1", "'rs'"), ("g:up", "'g'"), ("q:101", "'q'"),
            ("f:tga", "'f'"), ("dpr:0", "'dpr'"), ("el:maybe", "'el'"), ("bl:-1", "'bl'"), ("rs:fit:1:2:0:0:ce:1:2:3", "'rs'"),
            ("pr:missing", "'pr'"), ("mw:-1", "'mw'"), ("z:0", "'z'"), ("z:1:2:3", "'z'"), ("ex:1:up", "'ex'"), ("exar:1:sm", "'exar'"),
            ("g:sm:1", "'g'"), ("g:fp:0.5", "'g'"), ("g:fp:2:0.5", "'g'"), ("c:-5", "'c'"), ("t:300", "'t'"), ("t:10:zz", "'t'"),
            ("pd:1:2:3:4:5", "'pd'"), ("rot:45", "'rot'"), ("fl:1:1:1", "'fl'"), ("bg:12:300:1", "'bg'"), ("bg:1:2", "'bg'"),
            ("bg:ff00ff00", "'bg'"), ("sh:-1", "'sh'"), ("pix:x", "'pix'"), ("wm:2", "'wm'"), ("wm:0.5:up", "'wm'"), ("wm:0.5:sm", "'wm'"),
            ("fq:webp", "'fq'"), ("fq:bogus:50", "'fq'"), ("fq:webp:101", "'fq'"), ("mb:-1", "'mb'"), ("skp:bogus", "'skp'"), ("raw:2", "'raw'"),
            ("exp:soon", "'exp'"), ("fn:YQ:1:2", "'fn'"), ("fn:%%%:1", "'fn'"), ("att:x", "'att'"), ("msr:-1", "'msr'"), ("msfs:x", "'msfs'"),
            ("maf:0", "'maf'"), ("mafr:x", "'mafr'"), ("mrd:-3", "'mrd'"), ("ph:x", "'ph'"), ("eth:x", "'eth'"), ("ar:x", "'ar'"),
        ])
    func errors(segment: String, named: String) {
        #expect {
            try ProcessingOptions(parsing: [segment])
        } throws: { error in
            guard let error = error as? ServerError else { return false }
            return error.status == 400 && error.message.contains(named)
        }
    }

    @Test("presets expand in place; the default preset applies first; presets may name presets, a cycle is skipped as imgproxy skips it")
    func presets() throws {
        let presets = ["default": ["q:60"], "thumb": ["rs:fill:100:100", "f:png"], "nested": ["pr:thumb", "bl:2"], "loop": ["pr:loop", "w:7"]]
        let options = try ProcessingOptions(parsing: ["w:10", "pr:thumb"], presets: presets)
        #expect((options.width, options.height, options.resizingType, options.format ?? "", options.quality) == (100, 100, .fill, "png", 60))
        #expect(try ProcessingOptions(parsing: ["pr:thumb", "q:90"], presets: presets).quality == 90)
        let nested = try ProcessingOptions(parsing: ["pr:nested"], presets: presets)
        #expect((nested.width, nested.blur) == (100, 2))
        #expect(try ProcessingOptions(parsing: ["pr:loop"], presets: presets).width == 7)
        #expect(throws: ServerError.self) { try ProcessingOptions(parsing: ["pr:missing"], presets: presets) }
    }

    @Test("IMAGO_* settings: keys, presets, limits and the listen address; bad values are refused by name")
    func settings() throws {
        let (host, port, configuration) = try ServerSettings.configuration([
            "IMAGO_LISTEN": "0.0.0.0:9090", "IMAGO_KEY": "736563726574,00", "IMAGO_SALT": "68656C6C6F,00", "IMAGO_PRESETS": "small=rs:fit:64:64/q:50",
            "IMAGO_ALLOWED_HOSTS": "example.com, .cdn.example", "IMAGO_MAX_FRAMES": "10", "IMAGO_AVIF": "true", "IMAGO_TIMEOUT": "45",
        ])
        #expect(
            (host, port, configuration.signer.pairs.count, configuration.limits.maxFrames, configuration.output.negotiatesAVIF) == (
                "0.0.0.0", 9090, 2, 10, true
            ))
        #expect(configuration.workTimeout == .seconds(45))
        #expect(configuration.presets["small"] == ["rs:fit:64:64", "q:50"])
        #expect(configuration.allowedHosts == ["example.com", ".cdn.example"])
        for bad in [
            ["IMAGO_LISTEN": "nowhere"], ["IMAGO_QUALITY": "0"], ["IMAGO_PRESETS": "x=zz:1"], ["IMAGO_KEY": "00"], ["IMAGO_AVIF": "perhaps"],
            ["IMAGO_TIMEOUT": "0"],
        ] {
            #expect(throws: ServerError.self) { try ServerSettings.configuration(bad) }
        }
        // imgproxy's defaults: profiles stripped (converted to sRGB), metadata stripped, copyright kept.
        let defaults = try ServerSettings.configuration([:]).configuration
        #expect(defaults.output.stripsColorProfile && defaults.output.stripsMetadata && defaults.output.keepsCopyright)
        let changed = try ServerSettings.configuration(["IMAGO_STRIP_COLOR_PROFILE": "false", "IMAGO_STRIP_METADATA": "0", "IMAGO_KEEP_COPYRIGHT": "no"])
            .configuration
        #expect(!changed.output.stripsColorProfile && !changed.output.stripsMetadata && !changed.output.keepsCopyright)
        #expect(throws: ServerError.self) { try ServerSettings.configuration(["IMAGO_STRIP_METADATA": "sometimes"]) }
    }

    @Test("every variable in the settings table is read: a value it cannot use is refused naming its flag, any other shows in what it configures")
    func everySettingRead() throws {
        // A setting that only shapes another is tried beside it: the separator splits presets.
        let companions = [
            "IMAGO_PRESETS_SEPARATOR": ["IMAGO_PRESETS": "a=cb:bogus-value-1"],
            "IMAGO_S3_ASSUME_ROLE_EXTERNAL_ID": ["IMAGO_S3_ASSUME_ROLE": "arn:aws:iam::123456789012:role/reader"],
        ]
        for row in ServerSettings.table {
            let companion = companions[row.variable] ?? [:]
            let baseline = String(describing: try ServerSettings.configuration(companion))
            do {
                let changed = String(describing: try ServerSettings.configuration(companion.merging([row.variable: "bogus-value-1"]) { $1 }))
                #expect(changed != baseline, "\(row.variable) is in the table but not read")
            } catch {
                #expect(error.message.contains(row.flag) && error.message.contains(row.variable), "\(error.message)")
            }
        }
    }
}
