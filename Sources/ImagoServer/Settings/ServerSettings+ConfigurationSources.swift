import Foundation

extension ServerSettings {
    /// Where more variables come from before the others are read (``ConfigurationSources``):
    /// an AWS Secrets Manager secret, AWS Systems Manager parameters, a `.env` file.
    static let configurationSources: [ServerSetting] = [
        .text(
            "--env-aws-secret", "IMAGO_ENV_AWS_SECRET", peers: [.same("IMGPROXY_ENV_AWS_SECRET_ID")],
            "the name or ARN of an AWS Secrets Manager secret whose text is a .env file of more variables, read at start with the AWS_* credentials"
        ) { $0.configurationSources.append("AWS secret " + $1) },
        .text(
            "--env-aws-secret-version", "IMAGO_ENV_AWS_SECRET_VERSION", peers: [.same("IMGPROXY_ENV_AWS_SECRET_VERSION_ID")],
            "the secret's version ID (default its current version)"
        ) { $0.configurationSources.append("version " + $1) },
        .text(
            "--env-aws-secret-stage", "IMAGO_ENV_AWS_SECRET_STAGE", peers: [.same("IMGPROXY_ENV_AWS_SECRET_VERSION_STAGE")],
            "the secret's staging label (AWSCURRENT, AWSPREVIOUS…), when no version ID is given"
        ) { $0.configurationSources.append("stage " + $1) },
        .text(
            "--env-aws-secret-region", "IMAGO_ENV_AWS_SECRET_REGION", peers: [.same("IMGPROXY_ENV_AWS_SECRET_REGION")],
            "the secret's region (default AWS_REGION, else us-west-1)"
        ) { $0.configurationSources.append("secret region " + $1) },
        .text(
            "--env-aws-ssm-path", "IMAGO_ENV_AWS_SSM_PATH", peers: [.same("IMGPROXY_ENV_AWS_SSM_PARAMETERS_PATH")],
            "an AWS Systems Manager path whose parameters are more variables, read at start: /p/IMGPROXY_KEY is IMGPROXY_KEY, /p/A/B is A_B"
        ) { $0.configurationSources.append("SSM path " + $1) },
        .text(
            "--env-aws-ssm-region", "IMAGO_ENV_AWS_SSM_REGION", peers: [.same("IMGPROXY_ENV_AWS_SSM_PARAMETERS_REGION")],
            "the parameters' region (default AWS_REGION, else us-west-1)"
        ) { $0.configurationSources.append("SSM region " + $1) },
        .text(
            "--env-file", "IMAGO_ENV_FILE", peers: [.same("IMGPROXY_ENV_LOCAL_FILE_PATH")],
            "a .env file of more variables, read at start after the secret and the parameters; each source's variables override the environment's and the sources' before it, and flags win over all"
        ) { $0.configurationSources.append(".env file " + $1) },
    ]
}
