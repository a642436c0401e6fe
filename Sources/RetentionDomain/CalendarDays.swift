import Foundation

/// Whole calendar days and short dates in a given time zone. Day counts compare local midnights,
/// so a 23- or 25-hour day around a DST change still counts as one day.
public enum CalendarDays {
    static func calendar(_ timeZone: TimeZone) -> Calendar {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        return calendar
    }

    /// UTC (the server's calendar) has no daylight saving and no offset: its days are whole
    /// multiples of 86,400 s from the epoch, so they are counted with integers (Foundation's
    /// Gregorian calendar costs microseconds a call, and every listed subscription asks).
    static func isUTC(_ timeZone: TimeZone) -> Bool { timeZone.identifier == "GMT" || timeZone.identifier == "UTC" }

    /// The day number (days since 1970-01-01) of `date` in UTC.
    static func utcDay(_ date: Date) -> Int { Int((date.timeIntervalSince1970 / 86_400).rounded(.down)) }

    /// The proleptic Gregorian year, month and day of a day number (days since 1970-01-01).
    static func civil(fromDay day: Int) -> (year: Int, month: Int, day: Int) {
        let shifted = day + 719_468  // days since 0000-03-01
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153  // March = 0
        let dayOfMonth = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, dayOfMonth)
    }

    /// Calendar days from `start` to `end` in `timeZone` (negative when `end` is earlier).
    public static func between(_ start: Date, _ end: Date, in timeZone: TimeZone) -> Int {
        if isUTC(timeZone) { return utcDay(end) - utcDay(start) }
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
        if isUTC(timeZone) {
            let parts = civil(fromDay: utcDay(date))
            return "\(monthNames[parts.month - 1]) \(parts.day), \(parts.year)"
        }
        let parts = calendar(timeZone).dateComponents([.year, .month, .day], from: date)
        let month = monthNames[(parts.month ?? 1) - 1]
        return "\(month) \(parts.day ?? 1), \(parts.year ?? 1970)"
    }

    /// "1 day" / "12 days".
    public static func phrase(_ days: Int) -> String { days == 1 ? "1 day" : "\(days) days" }
}
