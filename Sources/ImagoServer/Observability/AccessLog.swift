import Foundation
import Imago

#if canImport(Glibc)
    import Glibc
#endif

/// `imago serve`'s line per answer on standard error, in swift-log's stream format, made cheaply:
/// the timestamp is formatted once a second and the line goes out in one `write`. Through a
/// `Logger` each line cost a timestamp formatted anew and a flush; at tens of thousands of kept
/// answers a second that was a visible part of each. An app embedding ``ImageService`` without
/// one gets its lines through its own `Logger`.
public final class AccessLog: Sendable {
    private let stamp = Locked<(second: Int, text: String)>((-1, ""))
    private let descriptor: Int32

    /// A log writing to standard error.
    public static let standardError = AccessLog(descriptor: 2)

    init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    /// Writes the line of one answer.
    func answered(requestID: String, method: String, status: Int, milliseconds: Int, bytes: Int) {
        let line =
            "\(timestamp()) info imago-serve: bytes=\(bytes) method=\(method) ms=\(milliseconds) request_id=\(requestID) status=\(status) [ImagoServer] answered\n"
        var bytes = Array(line.utf8)
        bytes.withUnsafeMutableBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                guard written > 0 else { return }
                offset += written
            }
        }
    }

    /// The local time as swift-log writes it (`2026-11-28T06:55:29+0000`), made once a second.
    private func timestamp() -> String {
        var now = time(nil)
        return stamp.withLock { stamp in
            if stamp.second == Int(now) { return stamp.text }
            var parts = tm()
            localtime_r(&now, &parts)
            var buffer = [CChar](repeating: 0, count: 64)
            let count = strftime(&buffer, buffer.count, "%Y-%m-%dT%H:%M:%S%z", &parts)
            let text = String(decoding: buffer.prefix(count).map { UInt8(bitPattern: $0) }, as: UTF8.self)
            stamp = (Int(now), text)
            return text
        }
    }
}
