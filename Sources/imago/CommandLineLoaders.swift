import Foundation
import Imago

extension LoaderRegistry {
    /// The loaders every command uses: the standard ones, `s3://bucket/key` read as the AWS tools
    /// would (`AWS_ACCESS_KEY_ID`…, `~/.aws/credentials`, `AWS_REGION`, `AWS_ENDPOINT_URL`), and
    /// `gs://bucket/object` as Google's libraries would (`GOOGLE_APPLICATION_CREDENTIALS`,
    /// `STORAGE_EMULATOR_HOST`).
    static func commandLine(environment: [String: String] = ProcessInfo.processInfo.environment) -> LoaderRegistry {
        let loaders = LoaderRegistry.standard()
        #if HTTPClientLoader
            loaders.register(S3DataLoader(S3Configuration.standard(environment: environment)))
            loaders.register(GCSDataLoader(GCSConfiguration.standard(environment: environment)))
        #endif
        return loaders
    }
}

extension ImagePipeline.Configuration {
    /// The configuration every command starts from: transfers through the proxies curl's
    /// variables name (`http_proxy`, `https_proxy`, `all_proxy`, `no_proxy`).
    static func commandLine(environment: [String: String] = ProcessInfo.processInfo.environment) -> ImagePipeline.Configuration {
        var configuration = ImagePipeline.Configuration()
        configuration.proxies = ProxySettings.environment(environment)
        return configuration
    }
}
