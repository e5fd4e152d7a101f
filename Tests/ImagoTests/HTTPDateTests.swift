import Foundation
@testable import Imago
import Testing

@Suite("HTTP dates")
struct HTTPDateTests {
    static let rfcExample = Date(timeIntervalSince1970: 784_111_777)  // Sun, 06 Nov 1994 08:49:37 GMT

    @Test(
        "the three forms of RFC 9110 §5.6.7",
        arguments: [
            "Sun, 06 Nov 1994 08:49:37 GMT", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994", "  Sun, 06 nov 1994 08:49:37 GMT ",
        ])
    func forms(text: String) {
        #expect(HTTPFreshness.parseDate(text) == Self.rfcExample)
    }

    @Test("agrees with DateFormatter on 2,000 IMF-fixdates from 1901 to 2400")
    func agreesWithDateFormatter() {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        var seconds: Int64 = -2_145_916_800  // 1902-01-01
        for _ in 0..<2_000 {
            seconds += 7_877_777  // a little over 91 days, so every month, weekday and hour comes up
            let date = Date(timeIntervalSince1970: Double(seconds))
            let text = formatter.string(from: date)
            #expect(HTTPDate.parse(text) == date, "\(text)")
        }
    }

    @Test("two-digit years more than 50 years ahead are the past century")
    func twoDigitYears() throws {
        let now = try #require(HTTPDate.parse("Mon, 23 Nov 2026 00:00:00 GMT"))
        #expect(HTTPDate.parse("Thursday, 01-Jan-70 00:00:00 GMT", now: now) == HTTPDate.parse("Tue, 01 Jan 2070 00:00:00 GMT"))
        #expect(HTTPDate.parse("Friday, 01-Jan-99 00:00:00 GMT", now: now) == HTTPDate.parse("Fri, 01 Jan 1999 00:00:00 GMT"))
    }

    @Test(
        "malformed and out-of-range dates are nil",
        arguments: [
            "", "GMT", "Thu, 31 Feb 2024 00:00:00 GMT", "Thu, 01 Dec$1994 16:00:00 GMT", "Sun, 06 Nov 1994 24:00:00 GMT",
            "Sun, 06 Nov 1994 08:60:00 GMT", "Sun, 06 Nov 1994 08:49:37 PST", "Sun, 6 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 0000 08:49:37 GMT",
            "Sun, 06 Foo 1994 08:49:37 GMT", "Sun Nov 99 08:49:37 1994", "Sun, 06 Nov 1994 08:49 GMT", String(repeating: "9", count: 1000),
        ])
    func malformed(text: String) {
        #expect(HTTPFreshness.parseDate(text) == nil)
    }

    @Test("the header set that made Foundation's DateFormatter leak (fuzz finding) parses with no date")
    func fuzzFinding() throws {
        let data = try HostileFiles.data("fuzz-http-freshness-dateformatter-leak.txt")
        let headers = HeaderFields(
            String(decoding: data, as: UTF8.self).split(separator: "\n").map { line in
                let parts = line.split(separator: ":", maxSplits: 1)
                return HeaderFields.Field(name: String(parts.first ?? ""), value: parts.count > 1 ? String(parts[1]) : "")
            })
        let freshness = HTTPFreshness(headers: headers, receivedAt: Date(timeIntervalSince1970: 1_700_000_000))
        #expect(!freshness.isFresh(storedAt: Date(timeIntervalSince1970: 1_700_000_000), now: Date(timeIntervalSince1970: 1_700_000_001)))
    }

    @Test("format writes IMF-fixdates as GNU date does, and parse reads them back, from 1970 to 9999")
    func formatsAsDate() async throws {
        let instants: [Int] =
            [0, 951_782_400, 784_111_777, 1_709_164_799, 4_107_542_399, 253_402_300_799] + (0..<40).map { $0 * 6_311_520_013 % 253_402_300_799 }
        let script = instants.map { "date -u -d @\($0) '+%a, %d %b %Y %H:%M:%S GMT'" }.joined(separator: "; ")
        let reference = try await runProcess(URL(fileURLWithPath: "/bin/sh"), ["-c", script])
        let lines = String(decoding: reference.output, as: UTF8.self).split(separator: "\n").map(String.init)
        #expect(lines.count == instants.count)
        for (instant, line) in zip(instants, lines) {
            let date = Date(timeIntervalSince1970: Double(instant))
            #expect(HTTPDate.format(date) == line, "\(instant)")
            #expect(HTTPDate.parse(HTTPDate.format(date)) == date)
        }
    }
}
