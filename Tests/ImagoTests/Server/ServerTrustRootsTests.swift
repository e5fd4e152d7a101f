import Foundation
import Imago
import ImagoServer
import ImagoTestSupport
import Testing

@Suite("imago serve: SSL_CERT_FILE and SSL_CERT_DIR", .timeLimit(.minutes(6)))
struct ServerTrustRootsTests {
    @Test("the server trusts the authorities SSL_CERT_FILE names for https sources; a path that cannot be read stops it at start")
    func trustsCertFile() async throws {
        let folder = try TrustRootsTests.certificateFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let pem = folder.appendingPathComponent("cert.pem").path
        let settings = try ServerSettings.configuration(ServerSettings.values(arguments: [], environment: ["SSL_CERT_FILE": pem])).configuration
        #expect(settings.trustRoots == TrustRoots(paths: [pem]))
        #expect(throws: ServerError(status: 500, "SSL_CERT_FILE or SSL_CERT_DIR names /nowhere, which cannot be read")) {
            try ServerSettings.configuration(ServerSettings.values(arguments: [], environment: ["SSL_CERT_DIR": "/nowhere"]))
        }

        let secure = try await TestOrigin.start(tls: true)
        let source = secure.serve(try Corpus.data("jpeg/video-001.jpeg"), at: "/photo.jpg").absoluteString
        let path = ServerHarness.path(source, ["w:40"], extension: "png")
        try await withServer({ $0.trustRoots = settings.trustRoots }) { server in
            let answer = try await server.get(path)
            #expect(answer.status == 200)
            #expect(try DecoderRegistry.standard().decode(answer.body).width == 40)
        }
        try await withServer { server in
            let refused = try await server.get(path)
            #expect(refused.status >= 400, "not trusted without the root")
        }
        #expect(secure.log.requests.count == 1)
        try await secure.shutdown()
    }
}
