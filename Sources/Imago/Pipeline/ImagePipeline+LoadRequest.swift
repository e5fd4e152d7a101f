import Foundation

/// How a request becomes a transfer: headers, credentials, limits, deadline, task priority.
extension ImagePipeline {
    /// The transfer as the loader must make it: the URL without user info and the final headers.
    func loadRequest(for request: ImageRequest) -> DataLoadRequest {
        var url = request.url
        var headers = ["Accept": configuration.acceptHeader].merging(configuration.headers) { $1 }.merging(request.headers) { $1 }
        var userInfoCredentials: ImageRequest.Credentials?
        if let user = url.user, var components = URLComponents(url: url, resolvingAgainstBaseURL: false) {
            userInfoCredentials = ImageRequest.Credentials(
                user: user.removingPercentEncoding ?? user, password: (url.password ?? "").removingPercentEncoding ?? "")
            components.user = nil
            components.password = nil
            url = components.url ?? url
        }
        let hasAuthorization = headers.keys.contains { $0.lowercased() == "authorization" }
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
            headers: headers.sorted { $0.key < $1.key }.map { ($0.key, $0.value) },
            timeoutWithoutBytes: configuration.timeoutWithoutBytes,
            maxRedirects: configuration.maxRedirects,
            allowInvalidCertificates: configuration.allowInvalidCertificates || request.options.contains(.allowInvalidCertificates),
            headersDroppedOnCrossOriginRedirect: configuration.headersDroppedOnCrossOriginRedirect,
            addressPolicy: configuration.addressPolicy
        )
    }

    /// Runs `load`, failing with `timedOut` and cancelling it if it is not done by `deadline`.
    /// The group waits for the cancelled load to return, so nothing outlives the transfer.
    static func withDeadline<Value: Sendable>(
        _ deadline: ContinuousClock.Instant, url: URL, _ load: @escaping @Sendable () async throws -> Value
    ) async throws -> Value {
        try await withThrowingTaskGroup(of: Value?.self) { group in
            group.addTask(operation: load)
            group.addTask {
                try await Task.sleep(until: deadline, clock: .continuous)
                throw ImagoError(.timedOut, url: url)
            }
            defer { group.cancelAll() }
            // The load's value, or the deadline's error: the first child to end decides.
            guard let value = try await group.next() ?? nil else { throw ImagoError(.timedOut, url: url) }
            return value
        }
    }

    static func taskPriority(_ priority: ImageRequest.Priority) -> TaskPriority {
        switch priority {
        case .veryLow, .low: .low
        case .normal: .medium
        case .high, .veryHigh: .high
        }
    }
}
