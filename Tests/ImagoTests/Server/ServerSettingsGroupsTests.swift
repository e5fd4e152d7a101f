import Foundation
import Testing

@testable import ImagoServer

/// The settings in their groups: every flag and variable declared once, and the facts written in
/// several variables (compounds) read together, whichever of them are given.
@Suite("server settings in groups")
struct ServerSettingsGroupsTests {
    @Test("every flag and variable is declared once, in exactly one group")
    func declaredOnce() {
        let groups = [
            ServerSettings.configurationSources, ServerSettings.listenAndLimits, ServerSettings.sources, ServerSettings.output, ServerSettings.imgproxy,
            ServerSettings.thumbor,
            ServerSettings.memory, ServerSettings.resultStorage, ServerSettings.sourceStorage, ServerSettings.observability,
        ]
        #expect(groups.map(\.count).reduce(0, +) == ServerSettings.all.count)
        #expect(Set(ServerSettings.all.map(\.flag)).count == ServerSettings.all.count)
        #expect(Set(ServerSettings.all.map(\.variable)).count == ServerSettings.all.count)
    }

    @Test("the help shows defaults from the configuration: the one place they live")
    func defaultsFromTheConfiguration() {
        let defaults = ServerConfiguration()
        func help(_ flag: String) -> String { ServerSettings.all.first { $0.flag == flag }?.help ?? "" }
        #expect(help("--quality").hasSuffix("(default \(defaults.output.defaultQuality))"))
        #expect(help("--timeout").hasSuffix("(default \(defaults.workTimeout.components.seconds))"))
        #expect(help("--strip-metadata").hasSuffix("(default \(defaults.output.stripsMetadata))"))
        #expect(help("--memory-bytes").hasSuffix("(default \(defaults.memoryBytes))"))
        #expect(help("--avif-speed").hasSuffix("(default \(defaults.output.encoding.speed))"))
        #expect(help("--respect-orientation").hasSuffix("(true/false; default \(defaults.output.thumborRespectsOrientation), as thumbor)"))
    }

    @Test("imgproxy's signer: keys, salts and the signature size read together; a salt without a key stops the server")
    func imgproxySigner() throws {
        let sized = try ServerSettings.configuration(["IMAGO_SIGNATURE_SIZE": "8", "IMAGO_KEY": "736563726574", "IMAGO_SALT": "68656c6c6f"]).configuration
        #expect(sized.signer.pairs.count == 1 && sized.signer.signatureSize == 8)
        let peer = try ServerSettings.configuration(["IMGPROXY_SIGNATURE_SIZE": "4", "IMGPROXY_KEY": "736563726574", "IMGPROXY_SALT": "68656c6c6f"])
            .configuration
        #expect(peer.signer.pairs.count == 1 && peer.signer.signatureSize == 4)
        #expect(try ServerSettings.configuration(["IMAGO_SIGNATURE_SIZE": "16"]).configuration.signer.signatureSize == 16)
        #expect(throws: ServerError.self) { try ServerSettings.configuration(["IMAGO_SALT": "68656c6c6f"]) }
        do {
            _ = try ServerSettings.configuration(["IMGPROXY_KEY": "736563726574", "IMGPROXY_SALT": "68656c6c6f", "IMGPROXY_SIGNATURE_SIZE": "99"])
            Issue.record("a signature size of 99 was taken")
        } catch {
            #expect(error.message.contains("IMGPROXY_SIGNATURE_SIZE"), "a peer's variable is named as written: \(error.message)")
        }
    }

    @Test("thumbor's signer: unsafe URLs by default only without a key, ALLOW_UNSAFE_URL either way")
    func thumborSigner() throws {
        func signer(_ values: [String: String]) throws -> ThumborSigner { try ServerSettings.configuration(values).configuration.thumborSigner }
        #expect(try signer([:]).allowsUnsafe)
        #expect(try !signer(["IMAGO_THUMBOR_KEY": "k"]).allowsUnsafe)
        #expect(try signer(["IMAGO_ALLOW_UNSAFE_URL": "true", "IMAGO_THUMBOR_KEY": "k"]).allowsUnsafe)
        #expect(try !signer(["IMAGO_ALLOW_UNSAFE_URL": "false"]).allowsUnsafe)
        #expect(try signer(["thumbor.conf:SECURITY_KEY": "k", "thumbor.conf:ALLOW_UNSAFE_URL": "True"]).allowsUnsafe)
    }

    @Test("the watermark comes from one place: two stop the server naming both")
    func watermark() throws {
        do {
            _ = try ServerSettings.configuration(["IMAGO_WATERMARK_PATH": "/tmp/w.png", "IMAGO_WATERMARK_URL": "https://example.com/w.png"])
            Issue.record("two watermarks were taken")
        } catch {
            #expect(error.message == "set one of --watermark-path, --watermark-url")
        }
        let url = try ServerSettings.configuration(["IMGPROXY_WATERMARK_URL": "https://example.com/w.png"]).configuration
        #expect(url.output.watermark == .url(URL(string: "https://example.com/w.png")!))
    }
}
