import Foundation
import Imago
import Logging

#if canImport(Glibc)
    import Glibc
#endif

/// How `imago serve` writes its log lines (imgproxy's `IMGPROXY_LOG_FORMAT`): `pretty`, swift-log's
/// stream format (the default); `structured`, `key=value` pairs (logfmt); `json`, one object per
/// line; `gcp`, JSON with Google Cloud Logging's `severity` and `message` keys. Every line carries
/// its time, level and message, then its fields in order.
public enum LogFormat: String, Sendable, CaseIterable {
    /// swift-log's stream lines: `time level label: key=value … [source] message`.
    case pretty
    /// logfmt: `time=… level=INFO msg="…" key="…" …`.
    case structured
    /// One JSON object per line, with `time`, `level` and `msg`.
    case json
    /// One JSON object per line, with `time`, `severity` and `message` (Google Cloud Logging).
    case gcp

    /// A field's value: text is quoted and escaped as the format needs, a number is written bare.
    public enum Value: Sendable, Equatable {
        /// Text.
        case text(String)
        /// A whole number.
        case number(Int)
    }

    /// One line (with its newline) at `level` with `message` and `fields`, logged by `label`
    /// from the module `source`.
    public func line(
        level: Logger.Level, label: String, source: String = "ImagoServer", message: String, fields: [(String, Value)], now: time_t = time(nil)
    ) -> String {
        switch self {
        case .pretty:
            // As swift-log's stream handler: its metadata sorted by key, then the source.
            // Appended to one string: a kept answer's line is made at tens of thousands a second.
            var line = Self.stamp(now, utc: false)
            line.reserveCapacity(line.utf8.count + label.utf8.count + source.utf8.count + message.utf8.count + 16 + fields.count * 24)
            line += " "
            line += level.rawValue
            line += " "
            line += label
            line += ":"
            for (key, value) in fields.sorted(by: { $0.0 < $1.0 }) {
                line += " "
                line += key
                line += "="
                switch value {
                case .text(let text): line += text
                case .number(let number): line += String(number)
                }
            }
            line += " ["
            line += source
            line += "] "
            line += message
            line += "\n"
            return line
        case .structured:
            var line = "time=\(Self.stamp(now, utc: true)) level=\(Self.name(level)) msg=\(Self.quoted(message))"
            for (key, value) in fields {
                switch value {
                case .text(let text): line += " \(key)=\(Self.quoted(text))"
                case .number(let number): line += " \(key)=\(number)"
                }
            }
            return line + "\n"
        case .json, .gcp:
            let (levelKey, messageKey) = self == .gcp ? ("severity", "message") : ("level", "msg")
            var line = "{\"time\":\"\(Self.stamp(now, utc: true))\",\"\(levelKey)\":\"\(Self.name(level))\",\"\(messageKey)\":\(Self.quoted(message))"
            for (key, value) in fields {
                switch value {
                case .text(let text): line += ",\(Self.quoted(key)):\(Self.quoted(text))"
                case .number(let number): line += ",\(Self.quoted(key)):\(number)"
                }
            }
            return line + "}\n"
        }
    }

    /// imgproxy's level names (also Google Cloud Logging's severities).
    static func name(_ level: Logger.Level) -> String {
        switch level {
        case .trace, .debug: "DEBUG"
        case .info, .notice: "INFO"
        case .warning: "WARNING"
        case .error: "ERROR"
        case .critical: "CRITICAL"
        }
    }

    /// `text` as a JSON string, which is also a logfmt quoted value: quotes, backslashes and
    /// control characters escaped, so no field can end a line or forge another.
    static func quoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F: out += String(format: "\\u%04x", scalar.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    /// The time, made once a second: the local time as swift-log writes it
    /// (`2026-11-28T06:55:29+0000`), or UTC in RFC 3339 (`2026-11-28T06:55:29Z`).
    static func stamp(_ now: time_t, utc: Bool) -> String {
        stamps.withLock { stamps in
            let index = utc ? 1 : 0
            if stamps[index].second == Int(now) { return stamps[index].text }
            var now = now
            var parts = tm()
            if utc { gmtime_r(&now, &parts) } else { localtime_r(&now, &parts) }
            var buffer = [CChar](repeating: 0, count: 64)
            let count = strftime(&buffer, buffer.count, utc ? "%Y-%m-%dT%H:%M:%SZ" : "%Y-%m-%dT%H:%M:%S%z", &parts)
            let text = String(decoding: buffer.prefix(count).map { UInt8(bitPattern: $0) }, as: UTF8.self)
            stamps[index] = (Int(now), text)
            return text
        }
    }

    private static let stamps = Locked<[(second: Int, text: String)]>([(-1, ""), (-1, "")])
}
