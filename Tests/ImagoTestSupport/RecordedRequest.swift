import Foundation

/// A request as the origin received it.
public struct RecordedRequest: Sendable {
    /// The HTTP method.
    public var method: String
    /// The path without the query.
    public var path: String
    /// The query parameters.
    public var query: [String: String]
    /// The headers in the order they arrived.
    public var headers: [(name: String, value: String)]
    /// Which connection carried it (1, 2, … in the order connections were accepted).
    public var connectionID: Int

    /// The first header named `name` (case-insensitive).
    public func header(_ name: String) -> String? {
        headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }
}

extension TestOrigin {
    /// What the origin has seen so far, for counting and waiting.
    public struct Log: Sendable {
        /// Every request, in arrival order.
        public var requests: [RecordedRequest] = []
        /// Connections accepted.
        public var connectionsAccepted = 0
        /// Connections open now.
        public var openConnections = 0
        /// Requests received whose response has not ended on a connection still open: 0 once
        /// every client has either read its answer or hung up.
        public var unansweredRequests = 0
        /// Responses whose connection the client closed before the response was complete.
        public var abortedResponses = 0
        /// Body bytes really written to sockets (a throttled body stops when its client hangs up).
        public var bodyBytesWritten = 0
        /// Every response head sent, in order: the request's path, the status and the body bytes
        /// the response carries.
        public var responses: [RecordedResponse] = []

        /// Requests whose path is `path`.
        public func requests(to path: String) -> [RecordedRequest] {
            requests.filter { $0.path == path }
        }
    }
}

/// A response as the origin sent it.
public struct RecordedResponse: Sendable, Hashable {
    /// The path of the request it answers.
    public var path: String
    /// The HTTP status.
    public var status: Int
    /// Body bytes written (fewer than the body when the route cuts it).
    public var bodyBytes: Int
}
