import CoreMetrics
import Foundation
import Logging
import OTel
import ServiceLifecycle
import Tracing

/// `imago serve`'s OpenTelemetry (imgproxy's `IMGPROXY_OPEN_TELEMETRY_*`): spans, metrics and log
/// records sent over OTLP/HTTP by swift-otel, configured further by the standard `OTEL_*`
/// variables (`OTEL_EXPORTER_OTLP_ENDPOINT`, `OTEL_SERVICE_NAME`, `OTEL_EXPORTER_OTLP_PROTOCOL`,
/// the batch delays and timeouts). Nothing is made, and nothing costs a request, unless a
/// setting asks.
public struct Telemetry: Sendable {
    /// What `--open-telemetry*` set.
    public struct Settings: Sendable, Equatable {
        /// A span per request, with its stages' spans (`IMGPROXY_OPEN_TELEMETRY_ENABLE`).
        public var traces = false
        /// `/metrics`' metrics, also sent as OTLP metrics (`IMGPROXY_OPEN_TELEMETRY_ENABLE_METRICS`).
        public var metrics = false
        /// Every log line, also sent as an OTLP log record (`IMGPROXY_OPEN_TELEMETRY_ENABLE_LOGS`).
        public var logs = false
        /// Whether source fetches carry the request's `traceparent`
        /// (`IMGPROXY_OPEN_TELEMETRY_PROPAGATE_EXTERNAL`).
        public var propagatesToSources = false
        /// The collector's certificate authority, PEM (`IMGPROXY_OPEN_TELEMETRY_SERVER_CERT`).
        public var serverCertificate: String?
        /// The client's certificate for the collector, PEM (`IMGPROXY_OPEN_TELEMETRY_CLIENT_CERT`).
        public var clientCertificate: String?
        /// The client certificate's private key, PEM (`IMGPROXY_OPEN_TELEMETRY_CLIENT_KEY`).
        public var clientKey: String?

        /// Whether anything is sent.
        public var isEnabled: Bool { traces || metrics || logs }

        /// Nothing sent.
        public init() {}
    }

    /// Where spans go; nil without `--open-telemetry`.
    public let tracer: (any Tracer)?
    /// Where `/metrics`' metrics are also recorded; nil without `--open-telemetry-metrics`.
    public let metricsFactory: (any MetricsFactory)?
    /// Log handlers whose records are sent; nil without `--open-telemetry-logs`.
    public let logHandler: (@Sendable (String) -> any LogHandler)?
    /// The exporters' background work, to run beside the server: each sends what is left when
    /// the server stops.
    public let services: [any Service]

    /// The values of `OTEL_EXPORTER_OTLP_*PROTOCOL` that this build sends: OTLP over HTTP, with
    /// imgproxy's aliases `http` and `https` for `http/protobuf`.
    static let protocols: [String: String] = ["http/protobuf": "http/protobuf", "http": "http/protobuf", "https": "http/protobuf", "http/json": "http/json"]
    static let protocolVariables = [
        "OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL", "OTEL_EXPORTER_OTLP_LOGS_PROTOCOL",
    ]

    /// The exporters `settings` ask for, configured by `environment`'s `OTEL_*` variables;
    /// `diagnostics` hears swift-otel's own warnings (an export that failed). A protocol this build
    /// cannot send, or a certificate that cannot be written for the exporter, is a 500 naming the
    /// variable.
    public init(_ settings: Settings, environment: [String: String], diagnostics: Logger) throws(ServerError) {
        guard settings.isEnabled else {
            (tracer, metricsFactory, logHandler, services) = (nil, nil, nil, [])
            return
        }
        var environment = environment
        for variable in Self.protocolVariables {
            guard let value = environment[variable] else { continue }
            guard let known = Self.protocols[value.lowercased()] else {
                throw ServerError(
                    status: 500,
                    "\(variable)=\(value): Imago sends OTLP over HTTP only (http/protobuf, its aliases http and https, or http/json), to the collector's port 4318"
                )
            }
            environment[variable] = known
        }
        var configuration = OTel.Configuration.default
        configuration.serviceName = "imago"
        configuration.diagnosticLogger = .custom(diagnostics)
        configuration.diagnosticLogLevel = .warning
        configuration.traces.enabled = settings.traces
        configuration.metrics.enabled = settings.metrics
        configuration.logs.enabled = settings.logs
        let files = try Self.certificateFiles(settings)
        for exporter in [\OTel.Configuration.traces.otlpExporter, \.metrics.otlpExporter, \.logs.otlpExporter]
            as [WritableKeyPath<OTel.Configuration, OTel.Configuration.OTLPExporterConfiguration>]
        {
            if let path = files.serverCertificate { configuration[keyPath: exporter].certificateFilePath = path }
            if let path = files.clientCertificate { configuration[keyPath: exporter].clientCertificateFilePath = path }
            if let path = files.clientKey { configuration[keyPath: exporter].clientKeyFilePath = path }
        }
        do {
            // Each backend reads the process's environment itself: the aliases are written back to it.
            for variable in Self.protocolVariables { if let value = environment[variable] { setenv(variable, value, 1) } }
            var services: [any Service] = []
            if settings.traces {
                let backend = try OTel.makeTracingBackend(configuration: configuration)
                tracer = backend.factory
                services.append(backend.service)
            } else {
                tracer = nil
            }
            if settings.metrics {
                let backend = try OTel.makeMetricsBackend(configuration: configuration)
                metricsFactory = backend.factory
                services.append(backend.service)
            } else {
                metricsFactory = nil
            }
            if settings.logs {
                let backend = try OTel.makeLoggingBackend(configuration: configuration)
                logHandler = backend.factory
                services.append(backend.service)
            } else {
                logHandler = nil
            }
            self.services = services
        } catch {
            throw ServerError(status: 500, "--open-telemetry (IMGPROXY_OPEN_TELEMETRY_ENABLE): \(error)")
        }
    }

    /// The PEM certificates and key written to files only this user can read, for the exporter,
    /// which reads paths (imgproxy takes the PEM text, `\n` for line breaks).
    private static func certificateFiles(
        _ settings: Settings
    ) throws(ServerError) -> (serverCertificate: String?, clientCertificate: String?, clientKey: String?) {
        let pems: [(String, String?, String)] = [
            ("server-ca.pem", settings.serverCertificate, "IMGPROXY_OPEN_TELEMETRY_SERVER_CERT"),
            ("client-cert.pem", settings.clientCertificate, "IMGPROXY_OPEN_TELEMETRY_CLIENT_CERT"),
            ("client-key.pem", settings.clientKey, "IMGPROXY_OPEN_TELEMETRY_CLIENT_KEY"),
        ]
        guard pems.contains(where: { $0.1 != nil }) else { return (nil, nil, nil) }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("imago-otel-\(getpid())")
        var paths: [String?] = []
        for (name, pem, variable) in pems {
            guard let pem else {
                paths.append(nil)
                continue
            }
            let text = pem.replacingOccurrences(of: "\\n", with: "\n")
            guard text.contains("-----BEGIN ") else { throw ServerError(status: 500, "\(variable): not a PEM block") }
            let file = directory.appendingPathComponent(name)
            do {
                try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            } catch {
                throw ServerError(status: 500, "\(variable): cannot be written for the exporter (\(error.localizedDescription))")
            }
            try? FileManager.default.removeItem(at: file)
            guard FileManager.default.createFile(atPath: file.path, contents: Data(text.utf8), attributes: [.posixPermissions: 0o600]) else {
                throw ServerError(status: 500, "\(variable): cannot be written for the exporter to \(file.path)")
            }
            paths.append(file.path)
        }
        return (paths[0], paths[1], paths[2])
    }
}
