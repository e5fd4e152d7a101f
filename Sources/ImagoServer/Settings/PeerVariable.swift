import Foundation

/// A peer's own environment variable for a setting (imgproxy's `IMGPROXY_MAX_SRC_RESOLUTION` for
/// `--max-source-pixels`), read in the peer's spelling and unit and turned into the setting's text.
public struct PeerVariable: Sendable {
    /// The variable's name.
    public let name: String
    /// The setting's text for the peer's `text`, given what earlier peers of the same setting made
    /// (`current`, nil for none): several peers may build one value (`IMGPROXY_AUTO_WEBP` and
    /// `IMGPROXY_AUTO_AVIF` build one list). Throws naming the variable for a spelling the peer
    /// itself would refuse.
    let convert: @Sendable (_ text: String, _ current: String?) throws(ServerError) -> String
    /// Whether a blank value is a value (imgproxy reads `IMGPROXY_SOURCE_URL_QUERY_SEPARATOR=` as
    /// "none"); other blank variables are unset.
    var takesBlank = false

    init(_ name: String, _ convert: @escaping @Sendable (_ text: String, _ current: String?) throws(ServerError) -> String) {
        self.name = name
        self.convert = convert
    }

    /// `name`'s text as it is, a blank one too.
    static func sameOrBlank(_ name: String) -> PeerVariable {
        var peer = same(name)
        peer.takesBlank = true
        return peer
    }

    /// The 500 a value of this variable the peer would refuse gets.
    static func invalid(_ name: String, _ why: String = "has a value imgproxy does not accept") -> ServerError {
        ServerError(status: 500, "\(name) \(why)")
    }

    /// The prefix of a `thumbor.conf` setting's name among the values (`thumbor.conf:QUALITY`):
    /// never an environment variable's.
    static let thumborConfPrefix = "thumbor.conf:"

    /// thumbor.conf's setting `name`, its literal's text (``ThumborConfigFile/Value/settingText``)
    /// read as the setting's.
    static func thumbor(_ name: String) -> PeerVariable { same(thumborConfPrefix + name) }

    /// thumbor.conf's setting `name`, seconds as a number (`20.5`), as whole seconds rounded up.
    static func thumborSeconds(_ name: String) -> PeerVariable {
        PeerVariable(thumborConfPrefix + name) { text, _ throws(ServerError) in
            guard let seconds = Double(text), seconds.isFinite, seconds > 0, seconds <= 3600 else {
                throw invalid(name, "in thumbor.conf is not a number of seconds")
            }
            return String(Int(seconds.rounded(.up)))
        }
    }

    /// thumbor.conf's boolean setting `name`, its opposite (`PRESERVE_EXIF_INFO = True` is
    /// `--strip-metadata false`).
    static func thumborNot(_ name: String) -> PeerVariable {
        PeerVariable(thumborConfPrefix + name) { text, _ throws(ServerError) in
            switch text {
            case "true": return "false"
            case "false": return "true"
            default: throw invalid(name, "in thumbor.conf is not True or False")
            }
        }
    }

    /// thumbor.conf's number `name` (`75e6` is a float in Python) as a whole number.
    static func thumborWholeNumber(_ name: String) -> PeerVariable {
        PeerVariable(thumborConfPrefix + name) { text, _ throws(ServerError) in
            guard let value = Double(text), value.isFinite, value >= 0, value < 1e15 else { throw invalid(name, "in thumbor.conf is not a number") }
            return String(Int(value))
        }
    }

    /// thumbor.conf's setting `name` whose `False` means none (`ACCESS_CONTROL_ALLOW_ORIGIN_HEADER`).
    static func thumborOrNone(_ name: String) -> PeerVariable {
        PeerVariable(thumborConfPrefix + name) { text, _ in text == "false" ? "" : text }
    }

    /// The variable read as it is: its text means what the setting's does.
    static func same(_ name: String) -> PeerVariable { PeerVariable(name) { text, _ in text } }

    /// A boolean in Go's `strconv.ParseBool` spellings (`1`, `t`, `T`, `TRUE`, `true`, `True`, and
    /// the same for false), which imgproxy reads, as `true` or `false`.
    static func boolean(_ name: String) -> PeerVariable {
        PeerVariable(name) { text, _ throws(ServerError) in String(try goBool(name, text)) }
    }

    /// Go's `strconv.ParseBool`.
    static func goBool(_ name: String, _ text: String) throws(ServerError) -> Bool {
        switch text {
        case "1", "t", "T", "TRUE", "true", "True": return true
        case "0", "f", "F", "FALSE", "false", "False": return false
        default: throw invalid(name, "is not a boolean imgproxy reads (true, false, 1, 0, t, f)")
        }
    }

    /// A number of megapixels (imgproxy's `parseMegaInt`: a float times 1,000,000) as pixels.
    static func megapixels(_ name: String) -> PeerVariable {
        PeerVariable(name) { text, _ throws(ServerError) in
            guard let value = Double(text), value.isFinite, value >= 0, value * 1_000_000 < Double(Int.max) else { throw invalid(name) }
            return String(Int(value * 1_000_000))
        }
    }

    /// A format in a list of them, switched on or off by a boolean: `IMGPROXY_AUTO_AVIF=true` adds
    /// `avif` to the list earlier peers (or `start`) made; `false` takes it out.
    static func listMember(_ name: String, _ member: String, start: String) -> PeerVariable {
        PeerVariable(name) { text, current throws(ServerError) in
            var list = ServerSetting.list(current ?? start).filter { $0 != member }
            if try goBool(name, text) { list.append(member) }
            return list.joined(separator: ",")
        }
    }
}
