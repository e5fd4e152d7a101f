import Foundation
import Imago

extension LoaderRegistry {
    /// The loaders every command uses: the standard ones, and `s3://bucket/key` read as the AWS
    /// tools would (`AWS_ACCESS_KEY_ID`…, `~/.aws/credentials`, `AWS_REGION`, `AWS_ENDPOINT_URL`).
    static func commandLine(environment: [String: String] = ProcessInfo.processInfo.environment) -> LoaderRegistry {
        let loaders = LoaderRegistry.standard()
        #if HTTPClientLoader
            loaders.register(S3DataLoader(S3Configuration.standard(environment: environment)))
        #endif
        return loaders
    }
}
