import ArgumentParser
import Foundation
import Imago

extension LoaderRegistry {
    /// The loaders every command uses: the standard ones, `s3://bucket/key` read as the AWS tools
    /// would (`AWS_ACCESS_KEY_ID`…, `~/.aws/credentials`, `AWS_REGION`, `AWS_ENDPOINT_URL`), and
    /// `gs://bucket/object` as Google's libraries would (`GOOGLE_APPLICATION_CREDENTIALS`,
    /// `STORAGE_EMULATOR_HOST`), and `swift://container/object` as python-swiftclient would
    /// (`ST_AUTH`, `ST_USER`, `ST_KEY`).
    static func commandLine(environment: [String: String] = ProcessInfo.processInfo.environment) -> LoaderRegistry {
        let loaders = LoaderRegistry.standard()
        #if HTTPClientLoader
            loaders.register(S3DataLoader(S3Configuration.standard(environment: environment)))
            loaders.register(GCSDataLoader(GCSConfiguration.standard(environment: environment)))
            loaders.register(SwiftDataLoader(SwiftConfiguration.standard(environment: environment)))
        #endif
        return loaders
    }
}

extension ImagePipeline.Configuration {
    /// The configuration every command starts from: transfers through the proxies curl's
    /// variables name (`http_proxy`, `https_proxy`, `all_proxy`, `no_proxy`), trusting the
    /// certificate authorities OpenSSL's variables name (`SSL_CERT_FILE`, `SSL_CERT_DIR`).
    /// A path among those that cannot be read is an error, not a TLS failure on every source.
    static func commandLine(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> ImagePipeline.Configuration {
        let network = NetworkEnvironment(environment)
        if let problem = network.problem { throw ValidationError(problem) }
        var configuration = ImagePipeline.Configuration()
        (configuration.proxies, configuration.trustRoots) = (network.proxies, network.trustRoots)
        return configuration
    }
}
