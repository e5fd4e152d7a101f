import Foundation
import Imago
import Testing

/// Signature Version 4 against values nobody here computed: AWS's own worked example and
/// botocore's signer (`S3SigV4Auth`, botocore 1.x in the peers' venv, run once with a fixed clock).
@Suite("S3: Signature Version 4")
struct AWSSignatureV4Tests {
    @Test("AWS's GET Object example (S3 API reference, 'Signature Calculations for the Authorization Header')")
    func awsExample() {
        let signer = AWSSignatureV4(
            credentials: AWSCredentials(accessKeyID: "AKIAIOSFODNN7EXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
            region: "us-east-1")
        let headers = signer.headers(
            url: URL(string: "https://examplebucket.s3.amazonaws.com/test.txt")!, date: Date(timeIntervalSince1970: 1_369_353_600),
            extra: ["Range": "bytes=0-9"])
        #expect(
            headers["Authorization"]
                == "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41"
        )
        #expect(headers["X-Amz-Date"] == "20130524T000000Z" && headers["Host"] == "examplebucket.s3.amazonaws.com")
    }

    @Test("botocore's signature of a path-style request on a port, an encoded key, a version and a session token")
    func botocore() {
        let signer = AWSSignatureV4(
            credentials: AWSCredentials(accessKeyID: "AKIDTEST", secretAccessKey: "secret/with+chars", sessionToken: "session-token-1"),
            region: "eu-central-1")
        let key = AWSSignatureV4.awsEncoded("photos/a b+cé.jpg", keepingSlashes: true)
        #expect(key == "photos/a%20b%2Bc%C3%A9.jpg")
        let url = URL(string: "http://127.0.0.1:9000/my-bucket/\(key)?versionId=\(AWSSignatureV4.awsEncoded("3/4", keepingSlashes: false))")!
        // 2026-11-28T18:05:09Z
        let headers = signer.headers(url: url, date: Date(timeIntervalSince1970: 1_795_889_109))
        #expect(
            headers["Authorization"]
                == "AWS4-HMAC-SHA256 Credential=AKIDTEST/20261128/eu-central-1/s3/aws4_request, SignedHeaders=host;x-amz-content-sha256;x-amz-date;x-amz-security-token, Signature=55700a4c6904dc6715230966ae910b5bc2e2472881dbf1dc0a93c78730f899cd"
        )
        #expect(headers["Host"] == "127.0.0.1:9000" && headers["X-Amz-Security-Token"] == "session-token-1")
    }

    @Test("credentials from the environment, else the shared file's profile; the secret never in their description")
    func credentials() throws {
        let fromEnvironment = AWSCredentials.standard(environment: ["AWS_ACCESS_KEY_ID": "AKID1", "AWS_SECRET_ACCESS_KEY": "s3cr3t"])
        #expect(fromEnvironment == AWSCredentials(accessKeyID: "AKID1", secretAccessKey: "s3cr3t"))
        #expect(!"\(fromEnvironment!)".contains("s3cr3t") && "\(fromEnvironment!)".contains("AKID1"))

        let folder = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("credentials")
        try Data(
            """
            [default]
            aws_access_key_id = AKIDDEFAULT
            aws_secret_access_key = default-secret

            # a comment
            [images]
            aws_access_key_id=AKIDIMAGES
            aws_secret_access_key=images-secret
            aws_session_token = token
            """.utf8
        ).write(to: file)
        #expect(AWSCredentials.standard(environment: ["AWS_SHARED_CREDENTIALS_FILE": file.path])?.accessKeyID == "AKIDDEFAULT")
        let images = AWSCredentials.standard(environment: ["AWS_SHARED_CREDENTIALS_FILE": file.path, "AWS_PROFILE": "images"])
        #expect(images == AWSCredentials(accessKeyID: "AKIDIMAGES", secretAccessKey: "images-secret", sessionToken: "token"))
        #expect(AWSCredentials.standard(environment: ["AWS_SHARED_CREDENTIALS_FILE": file.path, "AWS_PROFILE": "none"]) == nil)
        #expect(AWSCredentials.standard(environment: ["HOME": folder.path]) == nil)
    }
}

/// `s3://` sources through the pipeline from a real S3 API server (moto in server mode) that checks
/// every request's signature.
@Suite("S3: the loader against moto", .enabled(if: ObjectStorePeer.isInstalled, "needs the peers' venv: make test installs it"), .timeLimit(.minutes(6)))
struct S3LoaderTests {
    static let photo = Corpus.root.appendingPathComponent("jpeg/video-001.jpeg")
    static let png = Corpus.root.appendingPathComponent("png/basn6a08.png")

    static func pipeline(_ configuration: S3Configuration, policy: AddressPolicy = .publicOnly) -> ImagePipeline {
        var pipelineConfiguration = ImagePipeline.Configuration()
        pipelineConfiguration.addressPolicy = policy
        pipelineConfiguration.memoryCache = nil
        let loaders = LoaderRegistry.standard()
        loaders.register(S3DataLoader(configuration))
        return ImagePipeline(configuration: pipelineConfiguration, loaders: loaders)
    }

    static func configuration(_ peer: ObjectStorePeer.S3, secret: String? = nil, buckets: BucketRule = BucketRule()) -> S3Configuration {
        S3Configuration(
            region: "us-east-1", endpoint: peer.endpoint,
            credentials: AWSCredentials(accessKeyID: peer.accessKeyID, secretAccessKey: secret ?? peer.secretAccessKey), buckets: buckets)
    }

    @Test("a signed GET reads the object whole, under a public-only policy (the endpoint is the operator's), with the store's ETag")
    func readsObject() async throws {
        try await withS3Peer(["photos": [Self.photo, Self.png]]) { peer in
            let pipeline = Self.pipeline(Self.configuration(peer))
            let response = try await pipeline.data(for: ImageRequest(url: URL(string: "s3://photos/video-001.jpeg")!))
            #expect(response.data == (try Data(contentsOf: Self.photo)))
            #expect(response.statusCode == 200 && response.headers["ETag"] != nil && response.headers["Last-Modified"] != nil)
            let image = try await pipeline.image(for: URL(string: "s3://photos/basn6a08.png")!)
            #expect(image.width == 32 && image.height == 32)
        }
    }

    @Test("a version is read by ?version and by ?versionId=version; an unknown one is the store's error")
    func versions() async throws {
        try await withS3Peer(["photos": [Self.photo]]) { peer in
            let pipeline = Self.pipeline(Self.configuration(peer))
            let version = try #require(peer.versions["photos/video-001.jpeg"] ?? nil)
            for query in [version, "versionId=\(version)"] {
                let response = try await pipeline.data(for: ImageRequest(url: URL(string: "s3://photos/video-001.jpeg?\(query)")!))
                #expect(response.data == (try Data(contentsOf: Self.photo)))
            }
            let error = await loadError(pipeline, ImageRequest(url: URL(string: "s3://photos/video-001.jpeg?nosuchversion")!))
            #expect(error?.code.kind == .httpStatus)
            #expect(error?.reason?.hasPrefix("S3 ") == true, "\(String(describing: error))")
        }
    }

    @Test("a missing key is a 404 whose reason is S3's NoSuchKey; a missing bucket NoSuchBucket")
    func missing() async throws {
        try await withS3Peer(["photos": [Self.photo]]) { peer in
            let pipeline = Self.pipeline(Self.configuration(peer))
            let error = try #require(await loadError(pipeline, ImageRequest(url: URL(string: "s3://photos/none.jpeg")!)))
            #expect(error.code == .httpStatus(404))
            #expect(error.reason?.hasPrefix("S3 NoSuchKey") == true, "\(error)")
            #expect(error.url?.absoluteString == "s3://photos/none.jpeg")
            let bucket = try #require(await loadError(pipeline, ImageRequest(url: URL(string: "s3://nobucket/a.jpeg")!)))
            #expect(bucket.code == .httpStatus(404) && bucket.reason?.hasPrefix("S3 NoSuchBucket") == true, "\(bucket)")
        }
    }

    @Test("a wrong secret is refused by the store (the request really is signed); the error names S3's code, never the secret or a signature")
    func wrongSecret() async throws {
        try await withS3Peer(["photos": [Self.photo]]) { peer in
            let wrong = "WRONGwrongWRONGwrongWRONGwrong0123456789"
            let pipeline = Self.pipeline(Self.configuration(peer, secret: wrong))
            let error = try #require(await loadError(pipeline, ImageRequest(url: URL(string: "s3://photos/video-001.jpeg")!)))
            #expect(error.code == .httpStatus(403))
            #expect(error.reason?.hasPrefix("S3 SignatureDoesNotMatch") == true, "\(error)")
            let text = "\(error) \(error.reason ?? "")"
            #expect(!text.contains(wrong) && !text.contains(peer.secretAccessKey) && !text.contains("Signature=") && !text.contains("StringToSign"))

            let unsigned = Self.pipeline(S3Configuration(region: "us-east-1", endpoint: peer.endpoint))
            let anonymous = try #require(await loadError(unsigned, ImageRequest(url: URL(string: "s3://photos/video-001.jpeg")!)))
            #expect(anonymous.code == .httpStatus(403))
        }
    }

    @Test("buckets outside the allowed list, or denied, are refused before any request; others are read")
    func bucketRules() async throws {
        try await withS3Peer(["photos": [Self.photo], "private": [Self.png]]) { peer in
            let allowed = Self.pipeline(Self.configuration(peer, buckets: BucketRule(allowed: ["photos"])))
            #expect(try await allowed.data(for: ImageRequest(url: URL(string: "s3://photos/video-001.jpeg")!)).data.count > 0)
            let outside = try #require(await loadError(allowed, ImageRequest(url: URL(string: "s3://private/basn6a08.png")!)))
            #expect(outside.code == .sourceRefused("access to the S3 bucket private is denied"))

            let denied = Self.pipeline(Self.configuration(peer, buckets: BucketRule(denied: ["private"])))
            #expect(await loadError(denied, ImageRequest(url: URL(string: "s3://private/basn6a08.png")!))?.code.kind == .sourceRefused)
            #expect(try await denied.data(for: ImageRequest(url: URL(string: "s3://photos/video-001.jpeg")!)).data.count > 0)
        }
    }

    @Test("URLs that name no key or a bucket that could move the request elsewhere are invalid, before any request")
    func invalidURLs() async throws {
        let pipeline = Self.pipeline(S3Configuration(endpoint: URL(string: "http://127.0.0.1:9")!))
        for text in ["s3://photos/", "s3://photos", "s3://bad%2Fbucket/key.jpg", "s3://a..b/key.jpg", "s3://.dot/key.jpg"] {
            guard let url = URL(string: text) else { continue }
            let error = await loadError(pipeline, ImageRequest(url: url))
            #expect(error?.code == .invalidURL, "\(text): \(String(describing: error))")
        }
    }

    @Test("a stale disk entry is revalidated with the store: If-None-Match, S3's 304, the cached bytes served")
    func revalidation() async throws {
        try await withS3Peer(["photos": [Self.photo]]) { peer in
            let folder = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: folder) }
            var configuration = ImagePipeline.Configuration()
            configuration.memoryCache = nil
            let disk = try DiskCache(configuration: .init(directory: folder))
            configuration.diskCache = disk
            let loaders = LoaderRegistry.standard()
            loaders.register(S3DataLoader(Self.configuration(peer)))
            let pipeline = ImagePipeline(configuration: configuration, loaders: loaders)
            let url = URL(string: "s3://photos/video-001.jpeg")!
            // Decoded, so the bytes are known good and written to the disk cache.
            let first = try await pipeline.response(for: ImageRequest(url: url))
            #expect(first.source == .network)
            await pipeline.waitUntilIdle()
            disk.flush()
            #expect(disk.count == 1)
            let second = try await pipeline.response(for: ImageRequest(url: url, cachePolicy: .refreshCached))
            #expect(second.source == .revalidated && second.statusCode == 304 && second.data == first.data)
        }
    }
}
