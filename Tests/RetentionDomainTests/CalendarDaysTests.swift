import Foundation
import Testing

@testable import RetentionDomain

@Suite("Calendar days and freeTrialDays")
struct CalendarDaysTests {
    func date(_ text: String) -> Date { WireFormat.parseDate(text)! }

    /// UTC's days are counted with integers; they agree with Foundation's Gregorian calendar.
    @Test func utcDaysAndDatesAgreeWithTheGregorianCalendar() {
        var generator = SystemRandomNumberGenerator()
        let calendar = CalendarDays.calendar(.gmt)
        let edges: [TimeInterval] = [0, -1, 86_399, 86_400, -86_400, -86_401, 951_782_400, 4_107_542_400, 1_795_348_800]
        let randoms = (0..<5_000).map { _ in TimeInterval.random(in: -8_000_000_000...10_000_000_000, using: &generator) }
        for seconds in edges + randoms {
            let date = Date(timeIntervalSince1970: seconds)
            let parts = calendar.dateComponents([.year, .month, .day], from: date)
            let civil = CalendarDays.civil(fromDay: CalendarDays.utcDay(date))
            #expect(civil.year == parts.year && civil.month == parts.month && civil.day == parts.day, "\(seconds)")
            let other = Date(timeIntervalSince1970: seconds + TimeInterval.random(in: -90_000_000...90_000_000, using: &generator))
            let expected = calendar.dateComponents([.day], from: calendar.startOfDay(for: date), to: calendar.startOfDay(for: other)).day
            #expect(CalendarDays.between(date, other, in: .gmt) == expected, "\(seconds) → \(other.timeIntervalSince1970)")
        }
        #expect(CalendarDays.display(date("2028-02-29T23:59:59Z"), in: .gmt) == "Feb 29, 2028")
        #expect(CalendarDays.display(date("2026-12-31T00:00:00Z"), in: TimeZone(identifier: "UTC")!) == "Dec 31, 2026")
    }

    @Test func wholeCalendarDaysNeverNegative() {
        let utc = TimeZone.gmt
        let now = date("2026-11-22T23:30:00Z")
        #expect(MigrationBridge.days(now: now, paidThrough: date("2026-11-23T00:30:00Z"), in: utc) == 1,
                "one hour later but the next calendar day")
        #expect(MigrationBridge.days(now: now, paidThrough: date("2026-11-22T23:59:00Z"), in: utc) == 0)
        #expect(MigrationBridge.days(now: now, paidThrough: date("2026-11-01T00:00:00Z"), in: utc) == 0)
        #expect(MigrationBridge.days(now: now, paidThrough: nil, in: utc) == 0)
    }

    /// The checkout's trial end and the days the agent reads out come from one rule.
    @Test func theBridgeTheCheckoutSetsIsTheBridgeTheAgentReadsOut() {
        let now = date("2026-11-22T12:00:00Z")
        let paid = date("2026-12-10T08:00:00Z")
        #expect(MigrationBridge.end(now: now, paidThrough: paid) == paid)
        #expect(MigrationBridge.end(now: now, paidThrough: paid, claimedEnd: date("2026-12-01T00:00:00Z")) == date("2026-12-01T00:00:00Z"))
        #expect(MigrationBridge.end(now: now, paidThrough: paid, claimedEnd: date("2026-11-01T00:00:00Z")) == nil, "a claim in the past")
        #expect(MigrationBridge.end(now: now, paidThrough: date("2026-11-01T00:00:00Z")) == nil, "nothing left to bridge")
        // Capped at two years, in the end the checkout sets and the days read out alike.
        let far = date("2030-01-01T00:00:00Z")
        let capped = try? #require(MigrationBridge.end(now: now, paidThrough: far))
        #expect(capped == now.addingTimeInterval(MigrationBridge.maximumTrial))
        #expect(MigrationBridge.days(now: now, paidThrough: far, in: .gmt) == 730)
        #expect(MigrationBridge.isTrial(now: now, end: now.addingTimeInterval(48 * 3_600)))
        #expect(!MigrationBridge.isTrial(now: now, end: now.addingTimeInterval(47 * 3_600)))
    }

    @Test func timeZoneDecidesTheCalendarDay() throws {
        let now = date("2026-11-22T23:30:00Z")
        let expiry = date("2026-11-24T02:00:00Z")
        #expect(MigrationBridge.days(now: now, paidThrough: expiry, in: .gmt) == 2)
        // In Tokyo (UTC+9) now is Nov 23 08:30 and expiry Nov 24 11:00: one day.
        let tokyo = try #require(TimeZone(identifier: "Asia/Tokyo"))
        #expect(MigrationBridge.days(now: now, paidThrough: expiry, in: tokyo) == 1)
        // In Los Angeles (UTC-8) now is Nov 22 15:30 and expiry Nov 23 18:00: one day.
        let losAngeles = try #require(TimeZone(identifier: "America/Los_Angeles"))
        #expect(MigrationBridge.days(now: now, paidThrough: expiry, in: losAngeles) == 1)
    }

    @Test func daylightSavingChangesDoNotShiftTheCount() throws {
        let newYork = try #require(TimeZone(identifier: "America/New_York"))
        // 2026-11-01 02:00 local: clocks go back (a 25-hour day).
        let beforeFallBack = date("2026-10-31T16:00:00Z")  // Oct 31 12:00 EDT
        let afterFallBack = date("2026-11-03T17:00:00Z")  // Nov 3 12:00 EST
        #expect(CalendarDays.between(beforeFallBack, afterFallBack, in: newYork) == 3)
        // 2026-03-08 02:00 local: clocks go forward (a 23-hour day). Midnight to just past midnight.
        let march7 = date("2026-03-07T05:30:00Z")  // Mar 7 00:30 EST
        let march9 = date("2026-03-09T04:10:00Z")  // Mar 9 00:10 EDT: 47.7 hours later, two calendar days
        #expect(CalendarDays.between(march7, march9, in: newYork) == 2)
        #expect(MigrationBridge.days(now: march7, paidThrough: march9, in: newYork) == 2)
    }

    @Test func displayDatesIgnoreTheMachineLocale() {
        #expect(CalendarDays.display(date("2026-12-01T09:30:00Z"), in: .gmt) == "Dec 1, 2026")
        #expect(CalendarDays.display(date("2026-12-31T23:30:00Z"), in: TimeZone(identifier: "Asia/Tokyo")!) == "Jan 1, 2027")
        #expect(CalendarDays.phrase(1) == "1 day")
        #expect(CalendarDays.phrase(12) == "12 days")
    }
}
