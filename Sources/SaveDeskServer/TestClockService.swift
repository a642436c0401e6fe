import Foundation
import SQLKit
import SaveDeskAPI

/// The test clock: moves test-mode time forward and settles every test customer's billing at the
/// new time (renewals, discount ends, pause auto-resume, trial ends, past due → expired,
/// cancel-at-period-end expiry) and the simulated App Store's timeline, each subscription's steps
/// in time order. All of it, the new offset included, is one transaction: a server killed
/// mid-advance leaves the clock and every subscription as they were. Live data never moves.
final class TestClockService: Sendable {
    typealias Schemas = Components.Schemas
    let subscriptions: SubscriptionService
    let appStore: AppStoreService

    init(subscriptions: SubscriptionService, appStore: AppStoreService) {
        self.subscriptions = subscriptions
        self.appStore = appStore
    }

    func advance(_ request: Schemas.ClockAdvanceRequest, idempotencyKey: String?) async throws -> Schemas.ClockAdvanceResponse {
        guard subscriptions.testClock.isAdjustable else {
            throw SaveDeskError.conflict("this server runs on real time; start it with --test-clock to move test-mode time", code: "clock_not_adjustable")
        }
        let days = Int64(request.days ?? 0), hours = Int64(request.hours ?? 0)
        guard days + hours > 0 else {
            throw SaveDeskError.badRequest("give a positive number of days or hours, got days \(days), hours \(hours)", code: "invalid_advance")
        }
        let step = days * 86_400 + hours * 3_600
        let (response, replayed) = try await subscriptions.idempotent(
            operation: "advanceClock", request: request, idempotencyKey: idempotencyKey
        ) { db -> Schemas.ClockAdvanceResponse in
            let current = try await db.select().column("offset_seconds").from("test_clock").where("id", .equal, 1).first()?
                .decode(column: "offset_seconds", as: Int64.self) ?? 0
            let offset = current + step
            try await db.delete(from: "test_clock").where("id", .equal, 1).run()
            try await db.insert(into: "test_clock").columns("id", "offset_seconds").values(SQLBind(1), SQLBind(offset)).run()
            let now = subscriptions.clock.now().unixSeconds + offset
            var transitions: [Schemas.ClockTransition] = []
            // The simulated App Store's timeline first (through the signed notification path), so the
            // web ledger then sees what Apple did: a migration trial follows Apple's renewals.
            for (customer, subscription, steps) in try await appStore.advanceSimulatedAppStore(db, now: now) {
                transitions.append(.init(customerId: customer, subscriptionId: subscription, steps: steps))
            }
            let customers = try await db.select().column("id").from("customers").where("livemode", .equal, false).orderBy("id").all()
                .map { try $0.decode(column: "id", as: String.self) }
            for customer in customers {
                for (subscription, steps) in try await subscriptions.settle(db, customerId: customer, now: now) {
                    transitions.append(.init(customerId: customer, subscriptionId: subscription, steps: steps))
                }
            }
            return Schemas.ClockAdvanceResponse(now: Date(unixSeconds: now), transitions: transitions)
        }
        // The committed offset (read back, so a replay or another instance's advance counts too).
        if !replayed { try await subscriptions.loadTestClock() }
        return response
    }
}
