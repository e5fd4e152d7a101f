import Foundation
import Imago

/// Shows a batch's progress on standard error: on a terminal, a live bar per file in flight and one
/// for the total, redrawn ten times a second; otherwise one plain line per finished file.
final class ProgressDisplay: Sendable {
    private struct FileProgress {
        var name: String
        var received: Int64
        var expected: Int64?
    }

    private struct State {
        var total = 0
        var done = 0
        var bytes: Int64 = 0
        var active: [String: FileProgress] = [:]
        var drawnLines = 0
        var renderer: Task<Void, Never>?
    }

    private let isTerminal: Bool
    private let isQuiet: Bool
    private let state = Locked(State())

    /// `quiet` prints nothing (for `--json` when standard error is not a terminal).
    init(quiet: Bool = false) {
        isTerminal = isatty(STDERR_FILENO) == 1
        isQuiet = quiet
    }

    func begin(total: Int) {
        guard !isQuiet else { return }
        state.withLock { state in
            state.total = total
            state.done = 0
            state.bytes = 0
            state.active = [:]
            state.drawnLines = 0
        }
        guard isTerminal else { return }
        let renderer = Task { [weak self] in
            while !Task.isCancelled {
                self?.draw()
                try? await Task.sleep(for: .milliseconds(100))
            }
        }
        state.withLock { $0.renderer = renderer }
    }

    /// Progress of `url`; handles sharing one transfer share one row.
    func progress(_ url: URL, received: Int64, expected: Int64?) {
        guard isTerminal, !isQuiet else { return }
        state.withLock { $0.active[url.absoluteString] = FileProgress(name: url.lastPathComponent, received: received, expected: expected) }
    }

    func finished(_ url: URL, result: Result<ImageResponse, ImagoError>) {
        guard !isQuiet else { return }
        let line = state.withLock { state -> String in
            state.active[url.absoluteString] = nil
            state.done += 1
            switch result {
            case .success(let response):
                state.bytes += Int64(response.data.count)
                return "ok     \(url.redactedString)  \(Int64(response.data.count).byteCount)  \(response.source.rawValue)"
            case .failure(let error):
                return "error  \(error)"
            }
        }
        if !isTerminal { write(line + "\n") }
    }

    func end() {
        guard !isQuiet else { return }
        let renderer = state.withLock { $0.renderer }
        renderer?.cancel()
        if isTerminal { draw() }
    }

    private func draw() {
        let text = state.withLock { state -> String in
            var lines: [String] = []
            for file in state.active.values.sorted(by: { $0.name < $1.name }).prefix(8) {
                let fraction = file.expected.map { $0 > 0 ? Double(file.received) / Double($0) : 0 }
                let name = file.name.count > 28 ? String(file.name.prefix(27)) + "…" : file.name
                lines.append("  " + name.padding(toLength: 28, withPad: " ", startingAt: 0) + " " + Self.bar(fraction) + " " + file.received.byteCount)
            }
            let fraction = state.total > 0 ? Double(state.done) / Double(state.total) : 1
            lines.append(
                "  " + "total".padding(toLength: 28, withPad: " ", startingAt: 0) + " " + Self.bar(fraction)
                    + " \(state.done)/\(state.total) images, \(state.bytes.byteCount) delivered")
            // Move up over what was drawn last time, clear those lines, draw anew.
            var out = String(repeating: "\u{1B}[1A\u{1B}[2K", count: state.drawnLines)
            out += lines.map { "\u{1B}[2K" + $0 }.joined(separator: "\n") + "\n"
            state.drawnLines = lines.count
            return out
        }
        write(text)
    }

    private static func bar(_ fraction: Double?) -> String {
        guard let fraction else { return "[" + String(repeating: "·", count: 24) + "]     " }
        let filled = Int((min(max(fraction, 0), 1) * 24).rounded())
        return "[" + String(repeating: "#", count: filled) + String(repeating: "-", count: 24 - filled) + "] " + String(format: "%3.0f%%", fraction * 100)
    }

    private func write(_ text: String) {
        FileHandle.standardError.write(Data(text.utf8))
    }
}
