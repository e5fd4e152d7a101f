import HTTPTypes

extension ServiceRequest {
    /// What the service needs of an HTTP request head: the method, the path without its query
    /// (percent-encoding kept), Accept, If-None-Match, X-Request-Id, Authorization and the client
    /// hints. The router and the
    /// event-loop answer for kept variants both make their requests here, so both give the service
    /// the same path for the same URL.
    init(_ head: HTTPRequest) {
        let target = head.path ?? "/"
        self.init(
            method: head.method.rawValue, path: target.utf8.firstIndex(of: UInt8(ascii: "?")).map { String(target[..<$0]) } ?? target,
            accept: head.headerFields[.accept], ifNoneMatch: head.headerFields[.ifNoneMatch], requestID: head.headerFields[ImageServer.requestIDField],
            authorization: head.headerFields[.authorization])
        fields = head.headerFields
        authority = head.authority
    }
}

extension ServiceResponse {
    /// The headers as HTTP fields (a name HTTP does not allow is left out).
    var headerFields: HTTPFields {
        var fields = prepared ?? HTTPFields()
        for field in headers {
            if let name = HTTPField.Name(field.name) { fields.append(HTTPField(name: name, value: field.value)) }
        }
        return fields
    }
}
