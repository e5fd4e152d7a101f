import Foundation
import Imago

/// Where `imago serve`'s variables come from besides its process's environment, read before the
/// settings in imgproxy's order (its `env.Load`): an AWS Secrets Manager secret holding a `.env`
/// file's text, then AWS Systems Manager parameters under a path, then a local `.env` file. Each
/// source's variables override the environment's and the sources' before it (as imgproxy's
/// `os.Setenv` does); flags still win over every one. Nothing read is logged or answered.
public enum ConfigurationSources {
    /// `environment` with every configured source's variables over it; throws naming the setting
    /// whose source could not be read.
    public static func environment(arguments: [String], environment: [String: String]) async throws(ServerError) -> [String: String] {
        let values = try ServerSettings.values(arguments: arguments, environment: environment)
        func given(_ variable: String) throws(ServerError) -> (text: String, from: String)? {
            guard let setting = ServerSettings.all.first(where: { $0.variable == variable }) else { return nil }
            return try ServerSettings.text(of: setting, in: values)
        }
        var merged = environment
        let defaultRegion = [environment["AWS_REGION"], environment["AWS_DEFAULT_REGION"]].compactMap { $0 }.first { !$0.isEmpty } ?? "us-west-1"
        #if HTTPClientLoader
            if let (secret, from) = try given("IMAGO_ENV_AWS_SECRET") {
                let region = try given("IMAGO_ENV_AWS_SECRET_REGION")?.text ?? defaultRegion
                var input: [String: any Sendable] = ["SecretId": secret]
                if let version = try given("IMAGO_ENV_AWS_SECRET_VERSION") {
                    input["VersionId"] = version.text
                } else if let stage = try given("IMAGO_ENV_AWS_SECRET_STAGE") {
                    input["VersionStage"] = stage.text
                }
                let answer: [String: Any]
                do {
                    let call = try AWSServiceCall(
                        service: "secretsmanager", endpointVariable: "SECRETS_MANAGER", region: region,
                        credentials: AWSCredentials.standard(environment: environment), environment: environment)
                    answer = try await call.json("GetSecretValue", input)
                } catch {
                    throw ServerError(status: 500, "\(from): the secret cannot be read (\(error.reason ?? error.localizedDescription))")
                }
                // A secret of binary data only has no variables, as imgproxy reads it.
                if let text = answer["SecretString"] as? String {
                    try merge(text, named: "\(from)'s secret", into: &merged)
                }
            }
            if let (path, from) = try given("IMAGO_ENV_AWS_SSM_PATH") {
                let region = try given("IMAGO_ENV_AWS_SSM_REGION")?.text ?? defaultRegion
                do {
                    let call = try AWSServiceCall(
                        service: "ssm", endpointVariable: "SSM", region: region, credentials: AWSCredentials.standard(environment: environment),
                        environment: environment)
                    merged.merge(try await parameters(under: path, call: call)) { _, loaded in loaded }
                } catch {
                    throw ServerError(status: 500, "\(from): the parameters cannot be read (\(error.reason ?? error.localizedDescription))")
                }
            }
        #endif
        if let (path, from) = try given("IMAGO_ENV_FILE") {
            guard let handle = FileHandle(forReadingAtPath: path), let data = try? handle.read(upToCount: maxBytes + 1), data.count <= maxBytes
            else {
                throw ServerError(status: 500, "\(from): \(path) cannot be read (or is over \(maxBytes >> 10) KiB)")
            }
            try? handle.close()
            guard let text = String(data: data, encoding: .utf8) else { throw ServerError(status: 500, "\(from): \(path) is not UTF-8 text") }
            try merge(text, named: path, into: &merged)
        }
        return merged
    }

    /// A `.env` text or file is a few KiB; past 1 MiB it is not one.
    static let maxBytes = 1 << 20

    /// `text`'s variables over `environment`; a line the rules cannot read is named.
    private static func merge(_ text: String, named name: String, into environment: inout [String: String]) throws(ServerError) {
        do {
            for (variable, value) in try DotEnvText(text, environment: environment).variables { environment[variable] = value }
        } catch {
            throw ServerError(status: 500, "\(name), line \(error.line): \(error.reason)")
        }
    }

    #if HTTPClientLoader
        /// The parameters under `path` (`GetParametersByPath`), decrypted, each named by what follows
        /// the path with `/` made `_`; parameters that are not text (an EC2 image ID) are left out.
        /// Recursive, as imgproxy's documentation shows `/p/IMGPROXY_CLOUD_WATCH/NAMESPACE` loaded
        /// (its code asks for one level only, which AWS answers without the nested ones).
        private static func parameters(under path: String, call: AWSServiceCall) async throws(ImagoError) -> [String: String] {
            var found: [String: String] = [:]
            var next: String?
            // A bound on the pages: ten parameters a page, a configuration has far fewer.
            for _ in 0..<100 {
                var input: [String: any Sendable] = ["Path": path, "WithDecryption": true, "Recursive": true]
                if let next { input["NextToken"] = next }
                let answer = try await call.json("GetParametersByPath", input)
                for parameter in answer["Parameters"] as? [[String: Any]] ?? [] {
                    guard let name = parameter["Name"] as? String, let value = parameter["Value"] as? String,
                        parameter["DataType"] as? String == "text"
                    else { continue }
                    var variable = name.hasPrefix(path) ? String(name.dropFirst(path.count)) : name
                    if variable.hasPrefix("/") { variable.removeFirst() }
                    found[variable.replacingOccurrences(of: "/", with: "_")] = value
                }
                guard let token = answer["NextToken"] as? String, !token.isEmpty else { return found }
                next = token
            }
            return found
        }
    #endif
}
