import Foundation
import SQLKit
import SaveDeskAPI

/// The test clock: moves an adjustable server clock forward and settles every customer's
/// billing at the new time (renewals, discount ends, pause auto-resume, trial ends, past due →
/// expired, cancel-at-period-end expiry), each subscription's steps in time order.
final class TestClockService: Sendable {
    typealias Schemas = Components.Schemas
    let subscriptions: SubscriptionService
    let appStore: AppStoreService

    init(subscriptions: SubscriptionService, appStore: AppStoreService) {
        self.subscriptions = subscriptions
        self.appStore = appStore
    }

    static let maxDays = 3650

    func advance(_ request: Schemas.ClockAdvanceRequest) async throws -> Schemas.ClockAdvanceResponse {
        guard RequestScope.current?.isSandbox == true else {
            throw SaveDeskError.forbidden("the test clock needs a test-mode key (sk_test_…); live keys cannot move time", code: "test_mode_only")
        }
        guard let clock = subscriptions.clock as? any AdjustableClock else {
            throw SaveDeskError.conflict("this server runs on real time; start it with --test-clock to move time", code: "clock_not_adjustable")
        }
        let days = request.days ?? 0, hours = request.hours ?? 0
        guard days >= 0, hours >= 0, days + hours > 0 else {
            throw SaveDeskError.badRequest("give a positive number of days or hours, got days \(days), hours \(hours)", code: "invalid_advance")
        }
        guard days <= Self.maxDays, hours <= Self.maxDays * 24 else {
            throw SaveDeskError.badRequest("advance at most \(Self.maxDays) days at a time", code: "invalid_advance")
        }
        var web = try await subscriptions.store.transaction { db in
            clock.advance(by: TimeInterval(days) * 86_400 + TimeInterval(hours) * 3_600)
            let now = subscriptions.clock.now()
            var transitions: [Schemas.ClockTransition] = []
            let customers = try await db.select().column("id").from("customers").orderBy("id").all()
                .map { try $0.decode(column: "id", as: String.self) }
            for customer in customers {
                for (subscription, steps) in try await subscriptions.settle(db, customerId: customer, now: now.unixSeconds) {
                    transitions.append(.init(customerId: customer, subscriptionId: subscription, steps: steps))
                }
            }
            return Schemas.ClockAdvanceResponse(now: now, transitions: transitions)
        }
        // The simulated App Store's timeline runs after, through the signed webhook path.
        for (customer, subscription, steps) in try await appStore.advanceSimulatedAppStore(now: web.now.unixSeconds) {
            web.transitions.append(.init(customerId: customer, subscriptionId: subscription, steps: steps))
        }
        return web
    }
}
