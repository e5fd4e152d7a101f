import Foundation
import ImagoTestSupport
import Testing

@testable import Imago

@Suite("Trust roots: certificate authorities besides the system's", .timeLimit(.minutes(6)))
struct TrustRootsTests {
    /// A folder holding the test certificate as `cert.pem`, and a `hashed/` folder with it under
    /// the subject-hash name OpenSSL's directories use (named by `openssl x509 -hash`).
    static func certificateFolder() throws -> URL {
        let folder = try temporaryDirectory()
        let pem = folder.appendingPathComponent("cert.pem")
        try Data(TestCertificate.certificatePEM.utf8).write(to: pem)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments = ["x509", "-hash", "-noout", "-in", pem.path]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let hash = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        process.waitUntilExit()
        let hashed = folder.appendingPathComponent("hashed")
        try FileManager.default.createDirectory(at: hashed, withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: pem, to: hashed.appendingPathComponent("\(hash).0"))
        // Passed over as OpenSSL's lookup passes them over: a hashed entry that is not PEM, a CRL.
        try Data("not a certificate\n".utf8).write(to: hashed.appendingPathComponent("00000000.0"))
        try Data("not a list\n".utf8).write(to: hashed.appendingPathComponent("\(hash).r0"))
        return folder
    }

    @Test(
        "an origin whose certificate a root file or a hashed directory vouches for is trusted; without it, a TLS failure",
        arguments: ["file", "directory"])
    func trustsAddedRoot(kind: String) async throws {
        let folder = try Self.certificateFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent(kind == "file" ? "cert.pem" : "hashed").path
        try await withOrigin(tls: true, configure: { $0.trustRoots = TrustRoots(paths: [path]) }) { origin, pipeline in
            let body = payload(2000)
            let url = origin.serve(body, at: "/trusted.png")
            let response = try await pipeline.data(for: ImageRequest(url: url))
            #expect(response.data == body)
            let plain = ImagePipeline()
            #expect(await loadError(plain, ImageRequest(url: url))?.code == .tlsFailure)
        }
    }

    @Test("roots that cannot be loaded fail https with a TLS failure naming them, and nothing is fetched")
    func unloadable() async throws {
        let folder = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let garbage = folder.appendingPathComponent("garbage.pem")
        try Data("not a certificate\n".utf8).write(to: garbage)
        try await withOrigin(tls: true, configure: { $0.trustRoots = TrustRoots(paths: [garbage.path]) }) { origin, pipeline in
            let url = origin.serve(payload(10), at: "/x.png")
            let error = await loadError(pipeline, ImageRequest(url: url))
            #expect(error?.code == .tlsFailure)
            #expect(error?.url == url)
            #expect(error?.description.contains(garbage.path) == true)
            #expect(origin.log.requests.isEmpty)
        }
    }

    @Test("a certificate directory's hashed names, as c_rehash makes them")
    func hashedNames() {
        #expect(["88d0bdcb.0", "0123abcd.12"].allSatisfy(HTTP1Client.isHashedName))
        #expect(
            !["88d0bdcb.r0", "88d0bdcb", "88d0bdc.0", "88d0bdcg.0", "88d0bdcb.", "ca.pem", "88d0bdcb.0.bak", "88d0bdcb.٣"].contains(
                where: HTTP1Client.isHashedName))
    }

    @Test("SSL_CERT_FILE and SSL_CERT_DIR (colon-separated) as OpenSSL reads them; missing paths are reported")
    func environment() throws {
        let roots = TrustRoots.environment(["SSL_CERT_FILE": "/etc/hostname", "SSL_CERT_DIR": "/tmp::/nowhere"])
        #expect(roots.paths == ["/etc/hostname", "/tmp", "/nowhere"])
        #expect(roots.unreadablePaths == ["/nowhere"])
        #expect(TrustRoots.environment([:]) == .none)
    }
}
