import Foundation

/// imgproxy's preset definitions, `name=option/option…`, as its `options/parser/presets.go` reads
/// them: from a variable split by `IMGPROXY_PRESETS_SEPARATOR`, then from a file, one per line
/// (blank lines and lines starting with `#` skipped). A later definition of a name replaces an
/// earlier one. A definition that is not `name=options`, or whose options do not parse once every
/// preset is known (a preset may use another), stops the server naming where it came from (the
/// file's line number).
struct PresetDefinitions {
    /// Name → option segments and where they were defined.
    private var definitions: [String: (segments: [String], origin: String)] = [:]
    /// What divides an option's name and arguments (`IMGPROXY_ARGUMENTS_SEPARATOR`).
    var argumentsSeparator = ":"

    /// Adds the definitions in `text`, split by `separator`; `origin` names them in errors.
    mutating func add(_ text: String, separator: String, origin: String) throws(ServerError) {
        for definition in text.components(separatedBy: separator) {
            try add(definition: definition, origin: origin)
        }
    }

    /// Adds the definitions of the file at `path`, one per line.
    mutating func add(fileAt path: String, origin: String) throws(ServerError) {
        // A presets file is a few kilobytes; a huge one is a mistake, not a configuration.
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: path), let size = attributes[.size] as? Int,
            size <= 1 << 20, let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8)
        else {
            throw ServerError(status: 500, "\(origin) cannot read \(path) (a UTF-8 file of at most 1 MiB)")
        }
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            try add(definition: String(line), origin: "\(origin) line \(index + 1)")
        }
    }

    private mutating func add(definition: String, origin: String) throws(ServerError) {
        let trimmed = definition.trimmingCharacters(in: .whitespacesAndNewlines)
        if trimmed.isEmpty || trimmed.hasPrefix("#") { return }
        let parts = trimmed.components(separatedBy: "=")
        guard parts.count == 2 else { throw ServerError(status: 500, "\(origin): '\(trimmed)' is not name=options") }
        let name = parts[0].trimmingCharacters(in: .whitespaces), value = parts[1].trimmingCharacters(in: .whitespaces)
        guard !name.isEmpty else { throw ServerError(status: 500, "\(origin): '\(trimmed)' has no name") }
        guard !value.isEmpty else { throw ServerError(status: 500, "\(origin): preset \(name) has no options") }
        let segments = value.components(separatedBy: "/")
        // As imgproxy: every segment is an option (it has an argument), else the value is not options.
        guard segments.allSatisfy({ $0.contains(argumentsSeparator) }) else {
            throw ServerError(status: 500, "\(origin): preset \(name) has a part that is not an option")
        }
        definitions[name] = (segments, origin)
    }

    /// Name → option segments, each preset checked by `validate` (given its segments and the
    /// whole table: the dialect's parser).
    func table(validate: ([String], [String: [String]]) throws(ServerError) -> Void) throws(ServerError) -> [String: [String]] {
        let table = definitions.mapValues(\.segments)
        for (name, definition) in definitions.sorted(by: { $0.key < $1.key }) {
            do {
                try validate(definition.segments, table)
            } catch {
                throw ServerError(status: 500, "\(definition.origin): preset \(name): \(error.message)")
            }
        }
        return table
    }
}
