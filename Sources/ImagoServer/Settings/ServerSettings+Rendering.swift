import Foundation

/// The settings as people read them: docs/SERVER.md's tables and the command's help, made from
/// the declarations.
extension ServerSettings {
    /// (flag, variable, what it sets), in docs/SERVER.md's order.
    public static var table: [(flag: String, variable: String, help: String)] { all.map { ($0.flag, $0.variable, $0.help) } }

    /// docs/SERVER.md's table of the settings, as Markdown.
    public static var markdownTable: String {
        let rows = all.map { setting in
            let variables = ([setting.variable] + setting.peerVariables).map { "`\($0)`" }.joined(separator: ", ")
            return "| `\(setting.flag)` | \(variables) | \(setting.help) |"
        }
        return (["| flag | variables | sets |", "| --- | --- | --- |"] + rows).joined(separator: "\n") + "\n"
    }

    /// docs/SERVER.md's "moving from imgproxy" table, as Markdown: every `IMGPROXY_*` variable
    /// imgproxy 4's open-source code reads (and the others Imago reads, marked whose they are),
    /// with the setting that reads it or why none does.
    public static var imgproxyMarkdownTable: String {
        let readers = Dictionary(all.flatMap { setting in setting.peerVariables.map { ($0, setting.flag) } }, uniquingKeysWith: { first, _ in first })
        let pro = all.flatMap(\.peerVariables).filter { $0.hasPrefix("IMGPROXY_") && !ImgproxyVariables.openSource.contains($0) }
        let rows = (ImgproxyVariables.openSource + pro).map { name in
            let whose = pro.contains(name) ? " (\(ImgproxyVariables.notInOpenSource[name] ?? "Pro"))" : ""
            if let flag = readers[name] { return "| `\(name)`\(whose) | read as `\(flag)` |" }
            return "| `\(name)` | not supported\(ImgproxyVariables.notes[name].map { ": " + $0 } ?? "") |"
        }
        return (["| imgproxy's variable | in Imago |", "| --- | --- |"] + rows).joined(separator: "\n") + "\n"
    }

    /// The settings as the command's help lists them.
    public static var help: String {
        all.map { setting in
            let peers = setting.peerVariables.isEmpty ? "" : ", " + setting.peerVariables.joined(separator: ", ")
            return "  \(setting.flag)\(setting.isSwitch ? "" : " <value>") (\(setting.variable)\(peers))\n      \(setting.help)"
        }
        .joined(separator: "\n")
    }

    /// The flag that sets `variable`.
    public static func flag(_ variable: String) -> String {
        all.first { $0.variable == variable }?.flag ?? variable
    }
}
