import Foundation
@testable import Imago
import Testing

@Suite("HTTP freshness (RFC 9111)")
struct HTTPFreshnessTests {
    static let received = Date(timeIntervalSince1970: 1_700_000_000)  // Tue, 14 Nov 2023 22:13:20 GMT
    static let dateHeader = ("Date", "Tue, 14 Nov 2023 22:13:20 GMT")

    static func freshness(_ headers: [(String, String)], heuristic: Duration = .seconds(3600)) -> HTTPFreshness {
        HTTPFreshness(headers: HeaderFields(headers.map { HeaderFields.Field(name: $0.0, value: $0.1) }), receivedAt: received, heuristicLifetime: heuristic)
    }

    @Test("max-age sets the lifetime and wins over Expires; fresh until then, stale after")
    func maxAge() {
        let policy = Self.freshness([Self.dateHeader, ("Cache-Control", "public, max-age=60"), ("Expires", "Wed, 21 Oct 2099 07:28:00 GMT")])
        #expect(policy.lifetime == .seconds(60))
        #expect(policy.isStorable && !policy.requiresRevalidation)
        #expect(policy.isFresh(storedAt: Self.received, now: Self.received + 59))
        #expect(!policy.isFresh(storedAt: Self.received, now: Self.received + 60))
    }

    @Test("Expires minus Date when there is no max-age; an unparsable Expires is already expired")
    func expires() {
        let policy = Self.freshness([Self.dateHeader, ("Expires", "Tue, 14 Nov 2023 23:13:20 GMT")])
        #expect(policy.lifetime == .seconds(3600))
        #expect(Self.freshness([Self.dateHeader, ("Expires", "0")]).lifetime == .zero)
    }

    @Test("the Age header and a Date in the past count toward the age")
    func age() {
        let aged = Self.freshness([Self.dateHeader, ("Cache-Control", "max-age=100"), ("Age", "90")])
        #expect(aged.initialAge == .seconds(90))
        #expect(aged.isFresh(storedAt: Self.received, now: Self.received + 9))
        #expect(!aged.isFresh(storedAt: Self.received, now: Self.received + 10))
        let late = Self.freshness([("Date", "Tue, 14 Nov 2023 22:12:20 GMT"), ("Cache-Control", "max-age=100")])
        #expect(late.initialAge == .seconds(60))
    }

    @Test("without freshness information: 10% of the time since Last-Modified, capped by the heuristic; else the heuristic")
    func heuristic() {
        let modified = Self.freshness([Self.dateHeader, ("Last-Modified", "Tue, 14 Nov 2023 12:13:20 GMT")])
        #expect(modified.lifetime == .seconds(3600))  // 10 hours → 1 hour, at the cap
        let recent = Self.freshness([Self.dateHeader, ("Last-Modified", "Tue, 14 Nov 2023 22:03:20 GMT")])
        #expect(recent.lifetime == .seconds(60))
        #expect(Self.freshness([Self.dateHeader], heuristic: .seconds(300)).lifetime == .seconds(300))
    }

    @Test("no-store is not storable; no-cache is stored but never fresh; must-revalidate, immutable and private are said")
    func directives() {
        #expect(!Self.freshness([("Cache-Control", "no-store")]).isStorable)
        #expect(Self.freshness([("Cache-Control", "private, max-age=60")]).isPrivate && Self.freshness([("Cache-Control", "private, max-age=60")]).isStorable)
        #expect(!Self.freshness([("Cache-Control", "public, max-age=60")]).isPrivate)
        let noCache = Self.freshness([("Cache-Control", "no-cache, max-age=600")])
        #expect(noCache.isStorable && noCache.lifetime == .zero && noCache.requiresRevalidation)
        #expect(!noCache.isFresh(storedAt: Self.received, now: Self.received))
        #expect(Self.freshness([("Cache-Control", "max-age=10, must-revalidate")]).requiresRevalidation)
        #expect(Self.freshness([("cache-control", "max-age=31536000, immutable")]).isImmutable)
    }

    @Test("quoted values keep their commas and escaped quotes: no-cache=\"a, b\" does not split into a directive b")
    func quotedDirectives() {
        let parsed = HTTPFreshness.directives(#"private="set-cookie, x-b", max-age=60, no-cache="a, max-age=0", ext="q\"u,o", immutable"#)
        #expect(parsed["private"] == .some("set-cookie, x-b"))
        #expect(parsed["max-age"] == .some("60"))
        #expect(parsed["no-cache"] == .some("a, max-age=0"))
        #expect(parsed["ext"] == .some(#"q"u,o"#))
        #expect(parsed.keys.contains("immutable") && parsed["immutable"]! == nil)
        #expect(parsed["x-b"] == nil && parsed["b"] == nil)
        // The max-age inside the quotes is not the directive's.
        #expect(Self.freshness([("Cache-Control", #"no-cache="x, max-age=5", max-age=600"#)]).lifetime == .zero)
        #expect(Self.freshness([("Cache-Control", #"private="a, b", max-age=600"#)]).lifetime == .seconds(600))
    }

    @Test("header names match ignoring ASCII case only")
    func headerNames() {
        #expect(HeaderFields.namesMatch("Content-Type", "content-type"))
        #expect(HeaderFields.namesMatch("ETAG", "ETag"))
        #expect(!HeaderFields.namesMatch("Content-Type", "Content-Typf"))
        #expect(!HeaderFields.namesMatch("Content-Type", "Content-Type "))
        #expect(!HeaderFields.namesMatch("x@", "x`"))  // 0x40 and 0x60 differ by the case bit but are not letters
        #expect(!HeaderFields.namesMatch("x[", "x{"))
        var fields: HeaderFields = ["Date": "x", "Cache-Control": "max-age=1"]
        fields.append(name: "cache-control", value: "no-store")
        #expect(fields["CACHE-CONTROL"] == "max-age=1")
        #expect(fields.values(for: "cache-control") == ["max-age=1", "no-store"])
        #expect(fields["age"] == nil)
        // Setting replaces every field of the name in the first one's place; nil removes them.
        fields["Cache-Control"] = "no-cache"
        #expect(fields.map(\.name) == ["Date", "Cache-Control"] && fields["cache-control"] == "no-cache")
        fields["date"] = nil
        #expect(fields.count == 1)
        // Merging: the other's names replace these; equality ignores the case of names, not order.
        let base: HeaderFields = ["Accept": "a", "User-Agent": "u"]
        let merged = base.merging(["user-agent": "v"])
        #expect(merged.map(\.value) == ["a", "v"])
        #expect(merged == ["ACCEPT": "a", "USER-AGENT": "v"] && merged != ["user-agent": "v", "accept": "a"])
    }

    @Test("validators become the conditional request's headers")
    func validators() {
        let policy = Self.freshness([("ETag", "\"v1\""), ("Last-Modified", "Tue, 14 Nov 2023 12:13:20 GMT")])
        #expect(policy.validationHeaders.map(\.name) == ["If-None-Match", "If-Modified-Since"])
        #expect(policy.validationHeaders.map(\.value) == ["\"v1\"", "Tue, 14 Nov 2023 12:13:20 GMT"])
        #expect(Self.freshness([]).validationHeaders.isEmpty)
    }

    @Test(
        "the three HTTP date forms are accepted (an unparsed Expires would give zero)",
        arguments: [
            "Sun, 06 Nov 1994 09:49:37 GMT", "Sunday, 06-Nov-94 09:49:37 GMT", "Sun Nov  6 09:49:37 1994",
        ])
    func dateForms(text: String) {
        let policy = HTTPFreshness(
            headers: ["Date": "Sun, 06 Nov 1994 08:49:37 GMT", "Expires": text],
            receivedAt: Date(timeIntervalSince1970: 784_111_777))
        #expect(policy.lifetime == .seconds(3600))
        #expect(policy.initialAge == .zero)
    }
}
