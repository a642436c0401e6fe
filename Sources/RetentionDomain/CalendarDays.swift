import Foundation

/// Whole calendar days and short dates in a given time zone. Day counts compare local midnights,
/// so a 23- or 25-hour day around a DST change still counts as one day.
public enum CalendarDays {
    static func calendar(_ timeZone: TimeZone) -> Calendar {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        return calendar
    }

    /// Calendar days from `start` to `end` in `timeZone` (negative when `end` is earlier).
    public static func between(_ start: Date, _ end: Date, in timeZone: TimeZone) -> Int {
        let calendar = calendar(timeZone)
        let from = calendar.startOfDay(for: start)
        let to = calendar.startOfDay(for: end)
        return calendar.dateComponents([.day], from: from, to: to).day ?? 0
    }

    /// Calendar days from `now` until `date`, never negative.
    public static func remaining(from now: Date, until date: Date, in timeZone: TimeZone) -> Int {
        max(0, between(now, date, in: timeZone))
    }

    private static let monthNames = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ]

    /// A short date an agent can read out, independent of the machine's locale: "Dec 22, 2026".
    public static func display(_ date: Date, in timeZone: TimeZone) -> String {
        let parts = calendar(timeZone).dateComponents([.year, .month, .day], from: date)
        let month = monthNames[(parts.month ?? 1) - 1]
        return "\(month) \(parts.day ?? 1), \(parts.year ?? 1970)"
    }

    /// "1 day" / "12 days".
    public static func phrase(_ days: Int) -> String { days == 1 ? "1 day" : "\(days) days" }
}
