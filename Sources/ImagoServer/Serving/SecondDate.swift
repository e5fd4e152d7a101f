import Foundation
import Glibc
import Imago

/// The `Date` header of an answer: now as an IMF-fixdate, formatted once a second.
struct SecondDate {
    private var second = 0
    private var text = ""

    /// Now's IMF-fixdate, made again only when the second has changed.
    mutating func now() -> String {
        let now = time(nil)
        if Int(now) != second {
            second = Int(now)
            text = HTTPDate.format(Date(timeIntervalSince1970: Double(now)))
        }
        return text
    }
}
