import Foundation
import Imago
import Testing

@testable import ImagoServer

/// imgproxy Pro's `autoquality`/`aq` and `IMAGO_AUTOQUALITY_*` on real answers, each checked by
/// scoring it against the image it was made from.
@Suite("imago serve autoquality")
struct AutoQualityServerTests {
    static let source = "png/benchRGB.png"

    /// The answer's SSIMULACRA2 score against the same variant made losslessly (PNG).
    static func score(_ server: ServerHarness, _ url: String, _ options: [String], answer: Data) async throws -> Double {
        let lossless = try await server.get(ServerHarness.path(url, options.filter { !$0.hasPrefix("aq") && !$0.hasPrefix("q:") } + ["f:png"]))
        let original = try DecoderRegistry.standard().decode(lossless.body)
        return try SSIMULACRA2.score(original: original, distorted: try DecoderRegistry.standard().decode(answer))
    }

    @Test("aq:ssimulacra2:T:min:max gives an answer scoring T that is smaller than the maximum quality's, with its own ETag")
    func urlOption() async throws {
        try await withServer { server in
            let url = server.origin.serve(try Corpus.data(Self.source), at: "/photo.png").absoluteString
            let options = ["aq:ssimulacra2:50:10:95:0", "f:jpg"]
            let answer = try await server.get(ServerHarness.path(url, options))
            #expect(answer.status == 200 && answer.header("Content-Type") == "image/jpeg")
            #expect(try await Self.score(server, url, options, answer: answer.body) >= 50)
            let top = try await server.get(ServerHarness.path(url, ["q:95", "f:jpg"]))
            #expect(answer.body.count < top.body.count)
            #expect(answer.header("ETag") != top.header("ETag"))
            // The same URL again is the same bytes, from memory: no new fetch.
            let fetches = server.origin.log.requests.count
            let again = try await server.get(ServerHarness.path(url, options))
            #expect(again.body == answer.body)
            #expect(server.origin.log.requests.count == fetches)
        }
    }

    @Test("the server's settings apply when the URL fixes no quality; q: in the URL wins; aq:none turns them off")
    func serverSettings() async throws {
        try await withServer({
            $0.output.autoQuality.method = .ssimulacra2
            $0.output.autoQuality.target = 40
            $0.output.autoQuality.minQuality = 5
            $0.output.autoQuality.maxQuality = 95
        }) { server in
            let url = server.origin.serve(try Corpus.data(Self.source), at: "/photo.png").absoluteString
            let auto = try await server.get(ServerHarness.path(url, ["f:jpg"]))
            let score = try await Self.score(server, url, ["f:jpg"], answer: auto.body)
            #expect(score >= 39.5 && score < 60, "\(score)")
            // q:80 and aq:none (the server's default quality, 80) are the same fixed encode.
            let fixed = try await server.get(ServerHarness.path(url, ["q:80", "f:jpg"]))
            let off = try await server.get(ServerHarness.path(url, ["aq:none", "f:jpg"]))
            #expect(fixed.body == off.body)
            #expect(off.body.count > auto.body.count)
        }
    }

    @Test("size: the largest quality whose answer fits the target bytes")
    func sizeMethod() async throws {
        try await withServer { server in
            let url = server.origin.serve(try Corpus.data(Self.source), at: "/photo.png").absoluteString
            let bound = try await server.get(ServerHarness.path(url, ["q:40", "f:webp"])).body.count
            let answer = try await server.get(ServerHarness.path(url, ["aq:size:\(bound):1:100", "f:webp"]))
            #expect(answer.status == 200 && answer.body.count <= bound)
        }
    }

    @Test(
        "a method Imago does not measure, or arguments out of range, are a 400 naming autoquality",
        arguments: ["aq:dssim:0.02", "aq:ssimulacra2:75:0", "aq:ssimulacra2:75:70:101", "aq:ssimulacra2:x", "aq:size:1:2:3:4:5:6"])
    func refused(option: String) async throws {
        try await withServer { server in
            let url = server.origin.serve(try Corpus.data(Self.source), at: "/photo.png").absoluteString
            let answer = try await server.get(ServerHarness.path(url, [option]))
            #expect(answer.status == 400)
            #expect(String(decoding: answer.body, as: UTF8.self).contains("'aq'"))
            #expect(server.origin.log.requests.isEmpty)
        }
    }

    @Test("IMAGO_AUTOQUALITY_* are read; a value Imago cannot use is refused naming its flag")
    func settings() throws {
        let configuration = try ServerSettings.configuration([
            "IMAGO_AUTOQUALITY_METHOD": "ssimulacra2", "IMAGO_AUTOQUALITY_TARGET": "80", "IMAGO_AUTOQUALITY_MIN": "30",
            "IMAGO_AUTOQUALITY_MAX": "90", "IMAGO_AUTOQUALITY_FORMAT_MIN": "webp=20,avif=25", "IMAGO_AUTOQUALITY_FORMAT_MAX": "jpg=85",
            "IMAGO_AUTOQUALITY_ALLOWED_ERROR": "1", "IMAGO_AUTOQUALITY_MAX_RESOLUTION": "4000000",
        ]).configuration.output.autoQuality
        #expect(configuration.method == .ssimulacra2 && configuration.target == 80)
        #expect(configuration.minQuality == 30 && configuration.maxQuality == 90 && configuration.allowedError == 1)
        #expect(configuration.formatMin == ["webp": 20, "avif": 25] && configuration.formatMax == ["jpeg": 85])
        #expect(configuration.maxResolution == 4_000_000)
        let search = try #require(configuration.search(format: .jpeg, width: 1000, height: 1000, animated: false))
        #expect(search.minQuality == 30 && search.maxQuality == 85 && search.method == .ssimulacra2(target: 80))
        #expect(configuration.search(format: .jpeg, width: 3000, height: 2000, animated: false) == nil)
        #expect(configuration.search(format: .png, width: 100, height: 100, animated: false) == nil)
        #expect(configuration.search(format: .webp, width: 100, height: 100, animated: true) == nil)
        for (variable, value) in [("IMAGO_AUTOQUALITY_METHOD", "dssim"), ("IMAGO_AUTOQUALITY_FORMAT_MIN", "jpeg:70")] {
            #expect(throws: ServerError.self) { try ServerSettings.configuration([variable: value]) }
        }
    }
}
