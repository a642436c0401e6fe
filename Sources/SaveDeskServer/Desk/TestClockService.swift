import RetentionDomain
import Foundation
import SaveDeskAPI

/// The test clock: moves test-mode time forward and settles every test customer's billing at the
/// new time (renewals, discount ends, pause auto-resume, trial ends, past due → expired,
/// cancel-at-period-end expiry) and the simulated App Store's timeline, each subscription's steps
/// in time order. All of it, the new offset included, is one transaction: a server killed
/// mid-advance leaves the clock and every subscription as they were. Live data never moves.
final class TestClockService: Sendable {
    typealias Schemas = Components.Schemas
    let store: Store
    let changes: ChangeTransaction
    let clock: DataClock
    let appStore: AppStoreService

    init(store: Store, changes: ChangeTransaction, clock: DataClock, appStore: AppStoreService) {
        self.store = store
        self.changes = changes
        self.clock = clock
        self.appStore = appStore
    }

    func advance(_ request: Schemas.ClockAdvanceRequest, scope: RequestScope, idempotencyKey: String?) async throws -> Schemas.ClockAdvanceResponse {
        guard clock.isAdjustable else {
            throw SaveDeskError.conflict("this server runs on real time; start it with --test-clock to move test-mode time", code: "clock_not_adjustable")
        }
        let days = Int64(request.days ?? 0), hours = Int64(request.hours ?? 0)
        guard days + hours > 0 else {
            throw SaveDeskError.unprocessable("give a positive number of days or hours, got days \(days), hours \(hours)", code: "invalid_advance")
        }
        let step = days * Seconds.wholeDay + hours * Seconds.wholeHour
        let (response, replayed) = try await changes.idempotent(
            scope, operation: "advanceClock", request: request, idempotencyKey: idempotencyKey
        ) { data -> Schemas.ClockAdvanceResponse in
            let offset = try await data.testClock.offset() + step
            try await data.testClock.setOffset(offset)
            let now = clock.server.now().unixSeconds + offset
            var transitions: [Schemas.ClockTransition] = []
            // The simulated App Store's timeline first (through the signed notification path), so the
            // web ledger then sees what Apple did: a migration trial follows Apple's renewals.
            for (customer, subscription, steps) in try await appStore.advanceSimulatedAppStore(data, now: now, scope: scope) {
                transitions.append(.init(customerId: customer, subscriptionId: subscription, steps: steps))
            }
            for customer in try await data.customers.ids(livemode: scope.livemode) {
                for (subscription, steps) in try await changes.settlement.settle(data, customerId: customer, now: now, scope: scope) {
                    transitions.append(.init(customerId: customer, subscriptionId: subscription, steps: steps))
                }
            }
            return Schemas.ClockAdvanceResponse(now: Date(unixSeconds: now), transitions: transitions)
        }
        // The committed offset (read back, so a replay or another instance's advance counts too).
        if !replayed { try await clock.reload(from: store) }
        return response
    }
}
