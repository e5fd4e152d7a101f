// Built with the `HTTPClientLoader` trait (on by default), with the object-store loaders.
#if HTTPClientLoader

    import Foundation

    /// What an object store's error body says, in a line fit for an error message: S3's XML
    /// (`<Error><Code>NoSuchKey</Code><Message>…</Message>`) and GCS's JSON
    /// (`{"error": {"code": 404, "message": "…"}}`), and Swift's HTML page (`<h1>Not Found</h1>`). Only the code and the message are read: S3's
    /// `SignatureDoesNotMatch` document also carries the signature and the string that was signed,
    /// which no message may show.
    enum ObjectStoreErrorDocument {
        /// A message is cut at this many characters.
        static let maxMessageLength = 200

        /// `S3 NoSuchKey: The specified key does not exist.`, or nil when the body is not S3's document.
        static func s3(status: Int, body: Data) -> String? {
            let text = String(decoding: body.prefix(HTTPDataLoader.maxFailureBodyBytes), as: UTF8.self)
            guard let code = element("Code", in: text) else { return nil }
            guard let message = element("Message", in: text) else { return "S3 \(code)" }
            return "S3 \(code): \(message)"
        }

        /// `GCS 404: No such object: bucket/name`, or nil when the body is not GCS's JSON error.
        static func gcs(status: Int, body: Data) -> String? {
            guard body.count <= HTTPDataLoader.maxFailureBodyBytes,
                let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any],
                let error = object["error"] as? [String: Any]
            else { return nil }
            let message = (error["message"] as? String).map(clean) ?? ""
            let code = (error["code"] as? Int).map(String.init) ?? String(status)
            return message.isEmpty ? "GCS \(code)" : "GCS \(code): \(message)"
        }

        /// `Swift 404: Not Found: The resource could not be found.`, from the small HTML page Swift
        /// answers errors with, or nil when the body is not one.
        static func swift(status: Int, body: Data) -> String? {
            let text = String(decoding: body.prefix(HTTPDataLoader.maxFailureBodyBytes), as: UTF8.self)
            guard let title = element("h1", in: text) else { return nil }
            guard let detail = element("p", in: text) else { return "Swift \(status): \(title)" }
            return "Swift \(status): \(title): \(detail)"
        }

        /// The text of the first `<name>…</name>`, entities for `<`, `>`, `&`, quotes decoded, cleaned.
        private static func element(_ name: String, in text: String) -> String? {
            guard let open = text.range(of: "<\(name)>"), let close = text.range(of: "</\(name)>", range: open.upperBound..<text.endIndex) else {
                return nil
            }
            let raw = text[open.upperBound..<close.lowerBound]
                .replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">")
                .replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&apos;", with: "'")
                .replacingOccurrences(of: "&amp;", with: "&")
            let cleaned = clean(raw)
            return cleaned.isEmpty ? nil : cleaned
        }

        /// Printable characters only, blanks run together, at most ``maxMessageLength``.
        private static func clean(_ text: String) -> String {
            var out = ""
            var lastWasSpace = true
            for character in text.unicodeScalars {
                if character.properties.isWhitespace || character.value < 0x20 || character.value == 0x7F {
                    if !lastWasSpace { out.append(" ") }
                    lastWasSpace = true
                } else {
                    out.unicodeScalars.append(character)
                    lastWasSpace = false
                }
                if out.count >= maxMessageLength { break }
            }
            return out.trimmingCharacters(in: .whitespaces)
        }
    }

#endif
