import HTTPTypes
import Imago
import Tracing

/// Reads a client's W3C trace context (`traceparent`, `tracestate`) from its request's fields.
struct HTTPFieldsExtractor: Extractor {
    func extract(key: String, from carrier: HTTPFields) -> String? {
        HTTPField.Name(key).flatMap { carrier[$0] }
    }
}

/// Writes the trace context a source fetch carries (imgproxy's
/// `IMGPROXY_OPEN_TELEMETRY_PROPAGATE_EXTERNAL`) into ``ImageRequest/traceHeaders``.
struct HeaderFieldsInjector: Injector {
    func inject(_ value: String, forKey key: String, into carrier: inout HeaderFields) {
        carrier[key] = value
    }
}
