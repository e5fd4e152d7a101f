import Foundation

/// How a request becomes a transfer: headers, credentials, limits, deadline, task priority.
extension ImagePipeline {
    /// The transfer as the loader must make it: the URL without user info and the final headers.
    func loadRequest(for request: ImageRequest) -> DataLoadRequest {
        var url = request.url
        var headers: HeaderFields = ["Accept": configuration.acceptHeader]
        headers = headers.merging(configuration.headers).merging(request.headers).merging(request.traceHeaders)
        var userInfoCredentials: ImageRequest.Credentials?
        if let user = url.user, var components = URLComponents(url: url, resolvingAgainstBaseURL: false) {
            userInfoCredentials = ImageRequest.Credentials(
                user: user.removingPercentEncoding ?? user, password: (url.password ?? "").removingPercentEncoding ?? "")
            components.user = nil
            components.password = nil
            url = components.url ?? url
        }
        let hasAuthorization = headers["Authorization"] != nil
        if !hasAuthorization, let credentials = request.credentials ?? userInfoCredentials ?? configuration.credentials {
            headers["Authorization"] = credentials.basicAuthorization
        }
        if request.options.contains(.sendCookies), let cookie = configuration.cookies?(url) {
            headers["Cookie"] = cookie
        }
        if let filter = configuration.headersFilter {
            headers = filter(url, headers)
        }
        return DataLoadRequest(
            url: url,
            headers: headers,
            timeoutWithoutBytes: configuration.timeoutWithoutBytes,
            maxRedirects: configuration.maxRedirects,
            allowInvalidCertificates: configuration.allowInvalidCertificates || request.options.contains(.allowInvalidCertificates),
            headersDroppedOnCrossOriginRedirect: configuration.headersDroppedOnCrossOriginRedirect,
            addressPolicy: configuration.addressPolicy,
            proxies: configuration.proxies,
            trustRoots: configuration.trustRoots,
            priority: request.priority
        )
    }

    static func taskPriority(_ priority: ImageRequest.Priority) -> TaskPriority {
        switch priority {
        case .veryLow, .low: .low
        case .normal: .medium
        case .high, .veryHigh: .high
        }
    }
}
