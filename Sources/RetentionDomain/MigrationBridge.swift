import Foundation

/// What a switch bridges so nobody pays twice: the web subscription starts with a migration trial
/// that ends when Apple's paid period does. The checkout sets the trial's end by this rule, and the
/// agent reads out its days by the same rule, so what is said is what is billed.
public enum MigrationBridge {
    /// Less than this left of Apple's period: no trial; billing starts at the boundary.
    public static let minimumTrial: TimeInterval = 48 * Seconds.hour
    /// A bridge never runs longer than this, whatever a period or a claim says.
    public static let maximumTrial: TimeInterval = 730 * Seconds.day

    /// When the bridge ends: Apple's paid-through date, capped by an end the client claimed and by
    /// `maximumTrial`. Nil when there is nothing to bridge (no paid period left).
    public static func end(now: Date, paidThrough: Date?, claimedEnd: Date? = nil) -> Date? {
        guard let paidThrough, paidThrough > now else { return nil }
        let end = min(paidThrough, claimedEnd ?? paidThrough, now.addingTimeInterval(maximumTrial))
        return end > now ? end : nil
    }

    /// Whether a bridge ending at `end` is long enough to be a migration trial.
    public static func isTrial(now: Date, end: Date) -> Bool { end.timeIntervalSince(now) >= minimumTrial }

    /// The whole calendar days the agent reads out: from now to the bridge's end (0 without one).
    public static func days(now: Date, paidThrough: Date?, in timeZone: TimeZone) -> Int {
        guard let end = end(now: now, paidThrough: paidThrough) else { return 0 }
        return CalendarDays.remaining(from: now, until: end, in: timeZone)
    }
}

/// Lengths of time in seconds, said once.
public enum Seconds {
    public static let minute: TimeInterval = 60
    public static let hour: TimeInterval = 3_600
    public static let day: TimeInterval = 86_400
    /// A day as whole seconds, for stored Unix times.
    public static let wholeDay: Int64 = 86_400
    public static let wholeHour: Int64 = 3_600
}
