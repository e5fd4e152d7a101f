import Foundation

/// Parses HTTP dates in the three forms RFC 9110 §5.6.7 requires a recipient to accept, by hand:
/// `Sun, 06 Nov 1994 08:49:37 GMT` (IMF-fixdate), `Sunday, 06-Nov-94 08:49:37 GMT` (RFC 850) and
/// `Sun Nov  6 08:49:37 1994` (asctime). Foundation's `DateFormatter` on Linux leaked memory on
/// some malformed values (found by the http-freshness fuzz harness), and headers come from
/// servers Imago does not control; this parser allocates nothing but its tokens and checks
/// every field's range.
public enum HTTPDate {
    private static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]

    /// The instant `text` names in any of the three forms, nil when it is none of them or a field
    /// is out of range; `now` places RFC 850's two-digit years.
    public static func parse(_ text: String, now: Date = Date()) -> Date? {
        guard text.utf8.count <= 64 else { return nil }
        let tokens = text.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
        switch tokens.count {
        case 6 where tokens[0].hasSuffix(","):
            // IMF-fixdate: day-name "," day month year time "GMT"
            guard tokens[5] == "GMT", let day = Int(tokens[1]), tokens[1].count == 2, let month = month(tokens[2]),
                tokens[3].count == 4, let year = Int(tokens[3])
            else { return nil }
            return make(year: year, month: month, day: day, time: tokens[4])
        case 4 where tokens[0].hasSuffix(","):
            // RFC 850: day-name "," dd-mon-yy time "GMT"
            let parts = tokens[1].split(separator: "-", omittingEmptySubsequences: false)
            guard tokens[3] == "GMT", parts.count == 3, parts[0].count == 2, let day = Int(parts[0]), let month = month(String(parts[1])),
                parts[2].count == 2, let twoDigits = Int(parts[2])
            else { return nil }
            return make(year: fullYear(twoDigits, now: now), month: month, day: day, time: tokens[2])
        case 5:
            // asctime: day-name month day time year
            guard let month = month(tokens[1]), (1...2).contains(tokens[2].count), let day = Int(tokens[2]),
                tokens[4].count == 4, let year = Int(tokens[4])
            else { return nil }
            return make(year: year, month: month, day: day, time: tokens[3])
        default:
            return nil
        }
    }

    private static func month(_ text: String) -> Int? {
        guard text.count == 3, let index = months.firstIndex(of: text.lowercased()) else { return nil }
        return index + 1
    }

    /// A two-digit year, read as RFC 9110 says: more than 50 years ahead means the past century.
    private static func fullYear(_ twoDigits: Int, now: Date) -> Int {
        let years = now.timeIntervalSince1970 / 31_556_952
        let current = years.isFinite && abs(years) < 8_000 ? 1970 + Int(years) : 2000
        var year = current - current % 100 + twoDigits
        if year > current + 50 { year -= 100 }
        return year
    }

    /// The date of `year-month-day` at `time` ("HH:MM:SS") in UTC, every field in range.
    private static func make(year: Int, month: Int, day: Int, time: String) -> Date? {
        let clock = time.split(separator: ":", omittingEmptySubsequences: false)
        guard clock.count == 3, clock.allSatisfy({ $0.count == 2 }),
            let hour = Int(clock[0]), let minute = Int(clock[1]), let second = Int(clock[2]),
            (0...23).contains(hour), (0...59).contains(minute), (0...60).contains(second),
            (1...9999).contains(year), (1...12).contains(month), (1...daysIn(month: month, year: year)).contains(day)
        else { return nil }
        let days = daysSince1970(year: year, month: month, day: day)
        return Date(timeIntervalSince1970: Double(days * 86_400 + hour * 3_600 + minute * 60 + min(second, 59)))
    }

    /// `date` as an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), to the second.
    public static func format(_ date: Date) -> String {
        let seconds = Int(date.timeIntervalSince1970.rounded(.down))
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let time = seconds - days * 86_400
        let (year, month, day) = civil(daysSince1970: days)
        let weekdays = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"]
        let weekday = weekdays[((days % 7) + 7) % 7]
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let monthName = months[month - 1].prefix(1).uppercased() + months[month - 1].dropFirst()
        let yearText = String(repeating: "0", count: max(0, 4 - String(year).count)) + String(year)
        return "\(weekday), \(two(day)) \(monthName) \(yearText) \(two(time / 3_600)):\(two(time % 3_600 / 60)):\(two(time % 60)) GMT"
    }

    /// The proleptic Gregorian date `days` after 1970-01-01 (Howard Hinnant's civil_from_days).
    private static func civil(daysSince1970 days: Int) -> (year: Int, month: Int, day: Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Days from 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's days_from_civil).
    private static func daysSince1970(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
