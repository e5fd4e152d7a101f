import Foundation

/// What a response's headers say about caching it (RFC 9111, for a private cache): whether it may
/// be stored, how long it stays fresh, whether it must be revalidated, and the validators for a
/// conditional request.
public struct HTTPFreshness: Sendable, Hashable {
    /// False for `Cache-Control: no-store`: the response must not be written to any cache.
    public var isStorable: Bool
    /// `Cache-Control: private`: a cache shared by several users (a fleet's store of originals)
    /// must not keep it; a private cache, as the pipeline's own, may.
    public var isPrivate: Bool
    /// How long the response is fresh from when it was generated (max-age, else Expires − Date,
    /// else the heuristic), zero with `no-cache`.
    public var lifetime: Duration
    /// The response's age when it was received (Age header, or Date to the receive time).
    public var initialAge: Duration
    /// `Cache-Control: immutable`: while fresh, not even a reload revalidates it.
    public var isImmutable: Bool
    /// `no-cache` or `must-revalidate`: once stale (at once, for no-cache), never served without
    /// revalidation.
    public var requiresRevalidation: Bool
    /// The `ETag`, for `If-None-Match`.
    public var etag: String?
    /// The `Last-Modified` date as sent, for `If-Modified-Since`.
    public var lastModified: String?

    /// Reads the headers of a response received at `receivedAt`. `heuristicLifetime` is used when
    /// the response says nothing of freshness and has no Last-Modified; with a Last-Modified, the
    /// heuristic is 10% of the time since then (RFC 9111 §4.2.2), capped at `heuristicLifetime`.
    public init(headers: HeaderFields, receivedAt: Date, heuristicLifetime: Duration = .seconds(3600)) {
        func header(_ name: String) -> String? { headers[name] }
        let directives = Self.directives(header("cache-control") ?? "")
        let date = header("date").flatMap(Self.parseDate)
        etag = header("etag")
        lastModified = header("last-modified")
        isStorable = directives["no-store"] == nil
        isPrivate = directives["private"] != nil
        isImmutable = directives["immutable"] != nil
        requiresRevalidation = directives["no-cache"] != nil || directives["must-revalidate"] != nil

        let base = date ?? receivedAt
        if directives["no-cache"] != nil {
            lifetime = .zero
        } else if let maxAge = directives["max-age"].flatMap({ Int($0 ?? "") }) {
            lifetime = .seconds(max(0, maxAge))
        } else if let expiresText = header("expires") {
            // An Expires that does not parse ("0", "-1") means already expired.
            let expires = Self.parseDate(expiresText) ?? .distantPast
            lifetime = .seconds(max(0, expires.timeIntervalSince(base)))
        } else if let modified = lastModified.flatMap(Self.parseDate) {
            let tenth = Duration.seconds(max(0, base.timeIntervalSince(modified)) / 10)
            lifetime = min(tenth, heuristicLifetime)
        } else {
            lifetime = heuristicLifetime
        }
        let apparentAge = Duration.seconds(max(0, receivedAt.timeIntervalSince(base)))
        let ageHeader = Duration.seconds(max(0, Int(header("age") ?? "") ?? 0))
        initialAge = max(apparentAge, ageHeader)
    }

    /// Freshness as stored (by the disk cache).
    init(
        isStorable: Bool, isPrivate: Bool = false, lifetime: Duration, initialAge: Duration, isImmutable: Bool, requiresRevalidation: Bool, etag: String?,
        lastModified: String?
    ) {
        self.isStorable = isStorable
        self.isPrivate = isPrivate
        self.lifetime = lifetime
        self.initialAge = initialAge
        self.isImmutable = isImmutable
        self.requiresRevalidation = requiresRevalidation
        self.etag = etag
        self.lastModified = lastModified
    }

    /// Whether a response stored at `storedAt` is still fresh at `now`.
    public func isFresh(storedAt: Date, now: Date) -> Bool {
        let age = initialAge + .seconds(max(0, now.timeIntervalSince(storedAt)))
        return age < lifetime
    }

    /// The headers of a conditional request that revalidates this response.
    public var validationHeaders: HeaderFields {
        var headers: HeaderFields = [:]
        if let etag { headers.append(name: "If-None-Match", value: etag) }
        if let lastModified { headers.append(name: "If-Modified-Since", value: lastModified) }
        return headers
    }

    /// `max-age=60, no-cache, private` → ["max-age": "60", "no-cache": nil, "private": nil].
    /// A quoted value may hold commas and escaped quotes (`no-cache="a, b"` is one directive,
    /// RFC 9110 §5.6.4); the first occurrence of a directive wins.
    static func directives(_ header: String) -> [String: String?] {
        var result: [String: String?] = [:]
        var name = "", value = "", hasValue = false, inQuotes = false, escaped = false
        func commit() {
            let key = name.trimmingCharacters(in: .whitespaces).lowercased()
            if !key.isEmpty, result[key] == nil {
                result[key] = hasValue ? value.trimmingCharacters(in: .whitespaces) : nil
            }
            (name, value, hasValue) = ("", "", false)
        }
        for character in header {
            if inQuotes {
                if escaped {
                    value.append(character)
                    escaped = false
                } else if character == "\\" {
                    escaped = true
                } else if character == "\"" {
                    inQuotes = false
                } else {
                    value.append(character)
                }
            } else if character == "," {
                commit()
            } else if character == "=" && !hasValue {
                hasValue = true
            } else if character == "\"" && hasValue {
                inQuotes = true
            } else if hasValue {
                value.append(character)
            } else {
                name.append(character)
            }
        }
        commit()
        return result
    }

    /// An HTTP date in any of the three forms RFC 9110 requires a recipient to accept.
    static func parseDate(_ text: String) -> Date? {
        HTTPDate.parse(text.trimmingCharacters(in: .whitespaces))
    }
}
