import Foundation
import Imago
import Logging

#if canImport(Glibc)
    import Glibc
#endif

/// `imago serve`'s log on standard error in one ``LogFormat``: its line per answer, made cheaply
/// (the timestamp formatted once a second, the line out in one `write`; through a `Logger` each
/// line cost a timestamp formatted anew and a flush, at tens of thousands of kept answers a second
/// a visible part of each), and, as ``handler(label:)``, every other line the server logs. An app
/// embedding ``ImageService`` without one gets its lines through its own `Logger`.
public final class AccessLog: Sendable {
    private let descriptor: Int32
    /// The lines' format.
    public let format: LogFormat
    /// Where lines also go, when the server sends them to syslog.
    private let syslog: SyslogWriter?
    /// Where answers' lines also go as log records, with `--open-telemetry-logs` (the server's
    /// other lines reach it through the logging system's handlers).
    private let records: Logger?

    /// A log writing swift-log's format to standard error.
    public static let standardError = AccessLog(descriptor: 2, format: .pretty)

    /// A log writing `format` to standard error.
    public convenience init(standardErrorIn format: LogFormat) {
        self.init(descriptor: 2, format: format)
    }

    /// The log `configuration` asks for: its ``ServerConfiguration/logFormat`` on standard error
    /// and, with `--syslog`, to its syslog daemon (a 500 naming the setting when that cannot be
    /// reached); answers' lines also to `records`' handlers when given (``Telemetry/logHandler``).
    public convenience init(for configuration: ServerConfiguration, records: (@Sendable (String) -> any LogHandler)? = nil) throws(ServerError) {
        self.init(
            descriptor: 2, format: configuration.logFormat, syslog: configuration.syslog.enabled ? try SyslogWriter(configuration.syslog) : nil,
            records: records)
    }

    init(descriptor: Int32, format: LogFormat, syslog: SyslogWriter? = nil, records: (@Sendable (String) -> any LogHandler)? = nil) {
        self.descriptor = descriptor
        self.format = format
        self.syslog = syslog
        self.records = records.map { factory in
            var logger = Logger(label: "imago-serve", factory: factory)
            // answered(_:) has already applied the server's level.
            logger.logLevel = .trace
            return logger
        }
    }

    /// Writes the line of one answer: at `info`, a 4xx at `warning` and a 5xx at `error` (as
    /// imgproxy logs them), when `level` lets it through. `stages` are the milliseconds each stage
    /// of an image made for it took (`fetch_ms`, `decode_ms`, `process_ms`, `encode_ms`).
    func answered(
        requestID: String, method: String, status: Int, milliseconds: Int, bytes: Int, stages: [(String, Int)], level: Logger.Level
    ) {
        let lineLevel = Self.level(status: status)
        guard lineLevel >= level else { return }
        var fields: [(String, LogFormat.Value)] = [
            ("request_id", .text(requestID)), ("method", .text(method)), ("status", .number(status)), ("ms", .number(milliseconds)),
            ("bytes", .number(bytes)),
        ]
        for (stage, stageMilliseconds) in stages { fields.append((stage, .number(stageMilliseconds))) }
        write(format.line(level: lineLevel, label: "imago-serve", message: "answered", fields: fields), level: lineLevel)
        if let records {
            var metadata: Logger.Metadata = [:]
            for (name, value) in fields {
                switch value {
                case .text(let text): metadata[name] = .string(text)
                case .number(let number): metadata[name] = .stringConvertible(number)
                }
            }
            records.log(level: lineLevel, "answered", metadata: metadata)
        }
    }

    /// The level of an answer's line.
    static func level(status: Int) -> Logger.Level {
        status >= 500 ? .error : status >= 400 ? .warning : .info
    }

    /// Writes `line` whole, and sends it to syslog when `level` is the syslog's or above.
    func write(_ line: String, level: Logger.Level) {
        syslog?.send(String(line.dropLast()), level: level)
        var bytes = Array(line.utf8)
        bytes.withUnsafeMutableBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = Glibc.write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                guard written > 0 else { return }
                offset += written
            }
        }
    }

    /// A swift-log handler writing `label`'s lines to this log, in its format.
    public func handler(label: String) -> some LogHandler {
        FormattedLogHandler(label: label, log: self)
    }
}

/// swift-log's handler for ``AccessLog``: each message a line in the log's ``LogFormat``, its
/// metadata as the line's fields.
struct FormattedLogHandler: LogHandler {
    let label: String
    let log: AccessLog
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .info

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let merged = metadata.merging(event.metadata ?? [:]) { $1 }
        let fields = merged.sorted { $0.key < $1.key }.map { key, value -> (String, LogFormat.Value) in (key, .text("\(value)")) }
        log.write(log.format.line(level: event.level, label: label, source: event.source, message: "\(event.message)", fields: fields), level: event.level)
    }
}
