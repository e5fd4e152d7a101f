import Foundation
import Imago

/// One setting of `imago serve`, declared once: its flag, its variables (`IMAGO_*` and, where it
/// means the same, the peer's own `IMGPROXY_*` names in their own units), its help, and how its
/// text sets the configuration. The command's flags, the environment reading, docs/SERVER.md's
/// tables and the help all come from ``ServerSettings/all``.
public struct ServerSetting: Sendable {
    /// The command-line flag (`--listen`).
    public let flag: String
    /// Imago's environment variable (`IMAGO_LISTEN`).
    public let variable: String
    /// The peer's own variables read when Imago's is not set, each turned into this setting's text.
    public let peers: [PeerVariable]
    /// The peer's variable names.
    public var peerVariables: [String] { peers.map(\.name) }
    /// A flag that takes no value (`--avif`): given, it sets `true`.
    public let isSwitch: Bool
    /// What it sets, for the help and the docs table.
    public let help: String
    let apply: @Sendable (inout ServerConfiguration, _ text: String, _ values: [String: String]) throws(ServerError) -> Void
    /// The fact this setting is one part of, applied once with every part's text; nil for a
    /// setting that stands alone.
    fileprivate(set) var compound: CompoundRule?

    init(
        _ flag: String, _ variable: String, peers: [PeerVariable] = [], switch isSwitch: Bool = false, _ help: String,
        apply: @escaping @Sendable (inout ServerConfiguration, _ text: String, _ values: [String: String]) throws(ServerError) -> Void
    ) {
        self.flag = flag
        self.variable = variable
        self.peers = peers
        self.isSwitch = isSwitch
        self.help = help
        self.apply = apply
    }

    /// The 500 a value this setting cannot use gets, naming its flag and variable.
    var invalid: ServerError { Self.invalid(flag, variable) }

    /// The 500 a value the setting `flag` (`variable`) cannot use gets.
    static func invalid(_ flag: String, _ variable: String) -> ServerError {
        ServerError(status: 500, "\(flag) (\(variable)) has a value Imago cannot use")
    }

    /// `text` as a path of plain segments (letters, digits, `-`, `_`, `.`, `~`), `/` put before it
    /// when missing: a route the router registers as it is, never a pattern.
    static func plainPath(_ text: String, _ flag: String, _ variable: String) throws(ServerError) -> String {
        let path = text.hasPrefix("/") ? text : "/" + text
        let plain = path.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte | 0x20 >= 0x61 && byte | 0x20 <= 0x7A) || "/-_.~".utf8.contains(byte)
        }
        guard plain, path.count > 1, path.count <= 256, !path.contains("//") else { throw invalid(flag, variable) }
        return path
    }

    /// `text` as an RFC 3339 instant (`2026-12-01T00:00:00Z`, fractions of a second and offsets
    /// allowed), as Go's `time.RFC3339` reads it for imgproxy; nil when it is not one.
    static func rfc3339(_ text: String) -> Date? {
        let plain = ISO8601DateFormatter()
        plain.formatOptions = [.withInternetDateTime]
        if let date = plain.date(from: text) { return date }
        let fractional = ISO8601DateFormatter()
        fractional.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return fractional.date(from: text)
    }

    /// Its text as a comma-separated list, blanks dropped.
    static func list(_ text: String) -> [String] {
        text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }
}

/// Several settings that are one fact (imgproxy's keys, salts and signature size; thumbor's key and
/// whether unsafe URLs are answered; the watermark's three places): applied once with every
/// part's text (nil for a part not given), after the settings that stand alone, so no part
/// depends on the order the settings are declared or read in.
struct CompoundRule: Sendable {
    /// The parts' variables, in the order their texts are given to ``apply``.
    let variables: [String]
    /// Applies the parts' `texts`; `values` are every setting's (a part may read what the AWS
    /// tools read, as a setting that stands alone may).
    let apply: @Sendable (inout ServerConfiguration, _ texts: [String?], _ values: [String: String]) throws(ServerError) -> Void
}

extension ServerSetting {
    /// `parts`, declared as one fact that `apply` sets from all their texts.
    static func compound(
        _ parts: ServerSetting...,
        apply: @escaping @Sendable (inout ServerConfiguration, _ texts: [String?], _ values: [String: String]) throws(ServerError) -> Void
    ) -> [ServerSetting] {
        compound(parts: parts, apply: apply)
    }

    /// `parts`, declared as one fact that `apply` sets from all their texts.
    static func compound(
        parts: [ServerSetting],
        apply: @escaping @Sendable (inout ServerConfiguration, _ texts: [String?], _ values: [String: String]) throws(ServerError) -> Void
    ) -> [ServerSetting] {
        let rule = CompoundRule(variables: parts.map(\.variable), apply: apply)
        return parts.map { part in
            var part = part
            part.compound = rule
            return part
        }
    }

    /// The GCS service account `text` holds (its JSON) or names (its file's path).
    static func gcsAccount(_ text: String, _ flag: String, _ variable: String) throws(ServerError) -> GCSServiceAccount {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard let account = trimmed.hasPrefix("{") ? GCSServiceAccount(json: Data(trimmed.utf8)) : GCSServiceAccount(file: trimmed) else {
            throw ServerError(status: 500, "\(flag) (\(variable)) is not a service account key (JSON with client_email and private_key)")
        }
        return account
    }

    /// A part of a ``compound(_:apply:)``: its flag, variables and help; the compound applies it.
    static func part(_ flag: String, _ variable: String, peers: [PeerVariable] = [], _ help: String) -> ServerSetting {
        ServerSetting(flag, variable, peers: peers, help) { _, _, _ in }
    }

    /// ` (default X)` for the value `path` holds in a new configuration (the one place defaults
    /// live), with `note` after it and `true/false; ` before it when asked.
    static func shownDefault(_ value: String, note: String, showsTrueFalse: Bool = false) -> String {
        " (" + (showsTrueFalse ? "true/false; " : "") + "default " + value + note + ")"
    }

    /// The configuration the help texts show defaults from.
    private static let defaults = ServerConfiguration()

    /// An integer setting of the configuration's `path`; the help shows its default from there.
    static func integer(
        _ flag: String, _ variable: String, _ range: ClosedRange<Int>, peers: [PeerVariable] = [], _ help: String, note: String = "",
        _ path: WritableKeyPath<ServerConfiguration, Int> & Sendable
    ) -> ServerSetting {
        integer(flag, variable, range, peers: peers, help + shownDefault("\(defaults[keyPath: path])", note: note)) { $0[keyPath: path] = $1 }
    }

    /// A number setting of the configuration's `path`; the help shows its default from there.
    static func number(
        _ flag: String, _ variable: String, _ range: ClosedRange<Double>, peers: [PeerVariable] = [], _ help: String, note: String = "",
        _ path: WritableKeyPath<ServerConfiguration, Double> & Sendable
    ) -> ServerSetting {
        number(flag, variable, range, peers: peers, help + shownDefault("\(defaults[keyPath: path])", note: note)) { $0[keyPath: path] = $1 }
    }

    /// A setting in seconds of the configuration's `path`; the help shows its default from there.
    static func seconds(
        _ flag: String, _ variable: String, peers: [PeerVariable] = [], _ help: String, note: String = "",
        _ path: WritableKeyPath<ServerConfiguration, Duration> & Sendable
    ) -> ServerSetting {
        seconds(flag, variable, peers: peers, help + shownDefault("\(defaults[keyPath: path].components.seconds)", note: note)) { $0[keyPath: path] = $1 }
    }

    /// A true/false setting of the configuration's `path`; the help shows its default from there.
    static func boolean(
        _ flag: String, _ variable: String, switch isSwitch: Bool = false, peers: [PeerVariable] = [], _ help: String, note: String = "",
        showsTrueFalse: Bool = false, _ path: WritableKeyPath<ServerConfiguration, Bool> & Sendable
    ) -> ServerSetting {
        boolean(
            flag, variable, switch: isSwitch, peers: peers, help + shownDefault("\(defaults[keyPath: path])", note: note, showsTrueFalse: showsTrueFalse)
        ) { $0[keyPath: path] = $1 }
    }

    static func text(
        _ flag: String, _ variable: String, peers: [PeerVariable] = [], _ help: String, _ set: @escaping @Sendable (inout ServerConfiguration, String) -> Void
    ) -> ServerSetting {
        ServerSetting(flag, variable, peers: peers, help) { configuration, text, _ in set(&configuration, text) }
    }

    static func integer(
        _ flag: String, _ variable: String, _ range: ClosedRange<Int>, peers: [PeerVariable] = [], _ help: String,
        _ set: @escaping @Sendable (inout ServerConfiguration, Int) -> Void
    ) -> ServerSetting {
        return ServerSetting(flag, variable, peers: peers, help) { configuration, text, _ throws(ServerError) in
            guard let value = Int(text), range.contains(value) else { throw ServerSetting.invalid(flag, variable) }
            set(&configuration, value)
        }
    }

    static func seconds(
        _ flag: String, _ variable: String, peers: [PeerVariable] = [], _ help: String,
        _ set: @escaping @Sendable (inout ServerConfiguration, Duration) -> Void
    ) -> ServerSetting {
        integer(flag, variable, 1...3600, peers: peers, help) { set(&$0, .seconds($1)) }
    }

    static func boolean(
        _ flag: String, _ variable: String, switch isSwitch: Bool = false, peers: [PeerVariable] = [], _ help: String,
        _ set: @escaping @Sendable (inout ServerConfiguration, Bool) -> Void
    ) -> ServerSetting {
        return ServerSetting(flag, variable, peers: peers, switch: isSwitch, help) { configuration, text, _ throws(ServerError) in
            set(&configuration, try ServerSetting.truth(text, flag, variable))
        }
    }

    /// `1`/`true`/`yes` or `0`/`false`/`no`; anything else is the setting's 500.
    static func truth(_ text: String, _ flag: String, _ variable: String) throws(ServerError) -> Bool {
        switch text.lowercased() {
        case "1", "true", "yes": return true
        case "0", "false", "no": return false
        default: throw ServerSetting.invalid(flag, variable)
        }
    }

    static func number(
        _ flag: String, _ variable: String, _ range: ClosedRange<Double>, peers: [PeerVariable] = [], _ help: String,
        _ set: @escaping @Sendable (inout ServerConfiguration, Double) -> Void
    ) -> ServerSetting {
        return ServerSetting(flag, variable, peers: peers, help) { configuration, text, _ throws(ServerError) in
            guard let value = Double(text), value.isFinite, range.contains(value) else { throw ServerSetting.invalid(flag, variable) }
            set(&configuration, value)
        }
    }

    /// `webp,avif`: formats a client's `Accept` can bring (``OutputFormat/negotiable``), kept in
    /// imgproxy's order of preference.
    static func formats(
        _ flag: String, _ variable: String, peers: [PeerVariable] = [], _ help: String,
        _ set: @escaping @Sendable (inout ServerConfiguration, [OutputFormat]) -> Void
    ) -> ServerSetting {
        return ServerSetting(flag, variable, peers: peers, help) { configuration, text, _ throws(ServerError) in
            let names = list(text)
            let formats = names.compactMap(OutputFormat.init(extension:))
            guard formats.count == names.count, formats.allSatisfy(OutputFormat.negotiable.contains) else {
                throw ServerError(
                    status: 500,
                    "\(flag) (\(variable)) lists a format Imago cannot offer by Accept (it offers \(OutputFormat.negotiable.map(\.rawValue).joined(separator: ", ")))"
                )
            }
            set(&configuration, OutputFormat.negotiable.filter(formats.contains))
        }
    }

    /// `jpeg=60,avif=40`: a quality per format.
    static func qualities(
        _ flag: String, _ variable: String, peers: [PeerVariable] = [], _ help: String,
        _ set: @escaping @Sendable (inout ServerConfiguration, [String: Int]) -> Void
    ) -> ServerSetting {
        return ServerSetting(flag, variable, peers: peers, help) { configuration, text, _ throws(ServerError) in
            var table: [String: Int] = [:]
            for pair in list(text) {
                let parts = pair.split(separator: "=")
                guard parts.count == 2, let format = OutputFormat(extension: String(parts[0]).trimmingCharacters(in: .whitespaces)),
                    let quality = Int(parts[1].trimmingCharacters(in: .whitespaces)), (1...100).contains(quality)
                else { throw ServerSetting.invalid(flag, variable) }
                table[format.rawValue] = quality
            }
            set(&configuration, table)
        }
    }
}

extension ServerSetting {
    /// The image one of three settings (a path, an http(s) URL, base64; `flags` in that order,
    /// their variables the flags' `IMAGO_` names) gives; nil when none is set, and a 500 when
    /// more than one is or the one given cannot be used.
    static func auxiliaryImage(_ texts: [String?], flags: [String]) throws(ServerError) -> ServerConfiguration.AuxiliaryImage? {
        let given = zip(flags, texts).filter { $0.1 != nil }
        guard given.count <= 1 else { throw ServerError(status: 500, "set one of \(given.map(\.0).joined(separator: ", "))") }
        func variable(_ flag: String) -> String { "IMAGO_" + flag.dropFirst(2).uppercased().replacingOccurrences(of: "-", with: "_") }
        if let path = texts[0] { return .path(path) }
        if let text = texts[1] {
            guard let url = URL(string: text), ["http", "https"].contains(url.scheme?.lowercased() ?? ""), url.host?.isEmpty == false else {
                throw invalid(flags[1], variable(flags[1]))
            }
            return .url(url)
        }
        if let text = texts[2] {
            guard let data = Data(base64Encoded: text), !data.isEmpty else { throw invalid(flags[2], variable(flags[2])) }
            return .data(data)
        }
        return nil
    }
}
