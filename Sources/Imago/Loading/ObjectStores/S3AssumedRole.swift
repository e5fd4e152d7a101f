// Built with the `HTTPClientLoader` trait (on by default): STS is asked over Imago's HTTP client.
#if HTTPClientLoader

    import Foundation

    extension S3Configuration.AssumedRole {
        /// The role's temporary credentials and how long they last: STS `AssumeRole` signed with
        /// `credentials`, a session of an hour (`imago`, as imgproxy's SDK names its own).
        func assume(
            with credentials: AWSCredentials?, region: String, network: NetworkEnvironment
        ) async throws(ImagoError) -> (
            value: AWSCredentials, lifetime: Duration
        ) {
            let endpoint = stsEndpoint ?? URL(string: "https://sts.\(region).amazonaws.com")!
            let sts = AWSServiceCall(service: "sts", region: region, endpoint: endpoint, credentials: credentials, network: network)
            var parameters = [("RoleArn", arn), ("RoleSessionName", "imago"), ("DurationSeconds", "3600")]
            if let externalID { parameters.append(("ExternalId", externalID)) }
            let text = String(decoding: try await sts.query("AssumeRole", version: "2011-06-15", parameters), as: UTF8.self)
            guard let id = AWSServiceCall.element("AccessKeyId", in: text), let secret = AWSServiceCall.element("SecretAccessKey", in: text),
                let token = AWSServiceCall.element("SessionToken", in: text), !id.isEmpty, !secret.isEmpty
            else {
                var failure = ImagoError(.httpStatus(502), url: endpoint)
                failure.reason = "sts AssumeRole: the answer has no credentials"
                throw failure
            }
            // Asked again a minute before they expire (ExpiringCredential), never held past an hour.
            let expiration = AWSServiceCall.element("Expiration", in: text).flatMap { try? Date($0, strategy: .iso8601) }
            let seconds = expiration.map { Int($0.timeIntervalSinceNow) } ?? 3600
            return (AWSCredentials(accessKeyID: id, secretAccessKey: secret, sessionToken: token), .seconds(min(max(seconds, 120), 3600)))
        }
    }

#endif
