import Foundation
import Observation
import RetentionDomain
import SaveDeskClient

/// The switch-and-save flow for one user: the seed's `ZSMigrationManager` surface, on the server's
/// decision. States move only by `MigrationOffer.transition`, so mid-flow states are locked against
/// refreshes; a dismissal is recorded on the server (every console sees it) and cached in the data
/// directory (it holds when the server cannot be reached).
@MainActor @Observable
public final class MigrationManager {
    public private(set) var state: MigrationOffer.State = .loading
    /// Present from `eligible` on (not when `dismissed`).
    public private(set) var offerData: MigrationOffer.OfferData?
    /// True while `startCheckout()` creates the checkout.
    public private(set) var isLoading = false
    /// The last failure of a checkout step, as a sentence.
    public private(set) var checkoutError: String?
    public let userId: String
    public let stripeCustomerId: String?

    /// The copy of every step (offer, accepted, completed, the Apple steps).
    public private(set) var display: MigrationOffer.DisplayCopy?
    /// Why the offer is not shown (when `ineligible` or `dismissed`).
    public private(set) var reasons: [IneligibleReason] = []
    /// The checkout in progress (its URL is for the customer).
    public private(set) var checkout: Wire.Checkout?
    /// The steps to read out for cancelling Apple billing.
    public var appleCancelSteps: [String] { display?.appleCancelSteps ?? [] }
    /// What the agent reads out once the customer paid, before Apple's renewal is off.
    public var acceptedTitle: String { display?.acceptedTitle ?? MigrationOffer.DisplayCopy.defaultAcceptedTitle }
    public var acceptedBody: String { display?.acceptedBody ?? MigrationOffer.DisplayCopy.defaultAcceptedBody }
    public var completedTitle: String { display?.completedTitle ?? MigrationOffer.DisplayCopy.defaultCompletedTitle }
    /// True while the App Store still renews after the steps were read out.
    public private(set) var waitingForAppleCancel = false
    /// The last failure to reach the server (loading, dismissing), as a sentence.
    public private(set) var loadError: String?
    /// The offer priced for the agent: product names, the price now and with the discount, the
    /// days bridged (present with `offerData`).
    public var terms: CancelFlow.RetentionPlan.SwitchTerms? {
        offerData.map { CancelFlow.RetentionPlan.SwitchTerms(offer: $0, catalog: catalog ?? []) }
    }

    @ObservationIgnored let calls: any SwitchAndSaveCalls
    @ObservationIgnored let dismissals: DismissalCache
    @ObservationIgnored let sessionId = "sd_session_" + UUID().uuidString.lowercased()
    @ObservationIgnored private var decision: SwitchAndSaveDecision?
    @ObservationIgnored private var impressionRecorded = false
    @ObservationIgnored private var catalog: [Product]?
    /// The Idempotency-Key of the checkout being started, kept until one is created: starting
    /// again after a failure whose answer was lost gets that checkout back, not a second one.
    @ObservationIgnored private var checkoutKey: String?

    public init(userId: String, stripeCustomerId: String?, calls: any SwitchAndSaveCalls, dismissals: DismissalCache) {
        self.userId = userId
        self.stripeCustomerId = stripeCustomerId
        self.calls = calls
        self.dismissals = dismissals
    }

    /// The server's decision as RetentionDomain states it (nil until evaluated).
    public var evaluation: SwitchAndSaveEligibility.Decision? { decision?.evaluation }

    /// Evaluates (or re-evaluates) eligibility. A locked state does not move. The offer counts as
    /// seen (one impression per session) unless `recordImpression` is false: the cancel flow
    /// records it only when its save-offer page shows the offer (`recordImpression()`).
    public func refresh(recordImpression: Bool = true) async {
        let cached = dismissals.entry(for: userId)
        do {
            var decision = try await calls.userOffer(userId: userId)
            loadError = nil
            if let cached, decision.state != .dismissed {
                if cached.synced {
                    // Recorded on the server and since cleared there (another console reset it).
                    dismissals.set(nil, for: userId)
                } else {
                    // Dismissed while the server was away: record it now.
                    try? await calls.recordOfferDismissed(userId: userId, variantId: nil, idempotencyKey: SaveDeskClient.newIdempotencyKey())
                    dismissals.set(.init(dismissedAt: cached.dismissedAt, synced: true), for: userId)
                    decision.state = .dismissed
                    decision.offerData = nil
                }
            }
            self.decision = decision
            apply(.evaluated(decision.state))
            reasons = decision.reasons
            if state.carriesOfferData, let data = decision.offerData {
                if catalog == nil { catalog = try? await calls.products() }
                offerData = data
                display = decision.display
            }
            if recordImpression { self.recordImpression() }
        } catch {
            loadError = error.message
            if cached != nil { apply(.evaluated(.dismissed)) }
        }
    }

    /// Counts the offer as seen, once per session (while it is offered).
    public func recordImpression() {
        guard state == .eligible, !impressionRecorded, let data = offerData else { return }
        impressionRecorded = true
        calls.recordOfferViewed(userId: userId, productId: data.prompt.productId, sessionId: sessionId, variantId: nil)
    }

    /// Creates the web checkout (with a migration trial bridging the App Store period) and returns
    /// its URL; nil on failure, with `checkoutError` saying why. `eligible` → `presented`.
    @discardableResult
    public func startCheckout() async -> URL? {
        guard state == .eligible || state == .presented, let data = offerData else {
            checkoutError = "the offer is not available (\(state.rawValue))"
            return nil
        }
        isLoading = true
        checkoutError = nil
        defer { isLoading = false }
        let key = checkoutKey ?? SaveDeskClient.newIdempotencyKey()
        checkoutKey = key
        do {
            let originalTransactionId = try await calls.restoreEntitlements(userId: userId).activeAppStoreOriginalTransactionId
            let created = try await calls.createCheckout(
                productId: data.prompt.productId, userId: userId, stripeCustomerId: stripeCustomerId,
                appStoreSubscriptionEnd: decision?.appleSubscription?.expiresAt, originalTransactionId: originalTransactionId,
                idempotencyKey: key
            )
            checkoutKey = nil
            checkout = created
            apply(.present)
            return URL(string: created.checkoutUrl)
        } catch {
            checkoutError = error.message
            if case .server(404, _) = error.kind { apply(.productUnavailable) }
            return nil
        }
    }

    /// `eligible` → `presented` without creating a checkout.
    public func present() { apply(.present) }

    /// After the customer paid: confirms the transaction with the server (a bounded poll), then
    /// `presented` → `accepted` and records the conversion (through the outbox).
    public func markCheckoutSucceeded() async {
        guard state == .presented else {
            checkoutError = "there is no checkout in progress (\(state.rawValue))"
            return
        }
        if let checkout {
            do {
                let transaction = try await calls.confirmTransaction(id: checkout.transactionId, attempts: 10, interval: .milliseconds(300))
                guard transaction.status == .completed else {
                    checkoutError = transaction.status == .failed
                        ? "the payment failed; the customer can try again"
                        : "the payment is not confirmed yet (\(transaction.status.rawValue)); try again in a moment"
                    return
                }
            } catch {
                checkoutError = error.message
                return
            }
        }
        checkoutError = nil
        apply(.checkoutSucceeded)
        calls.recordMigrationConverted(userId: userId)
    }

    /// There is no Settings sheet in a terminal: the steps to read out are shown, and the App
    /// Store's renewal is checked. `accepted` → `completed` once renewal is off; otherwise
    /// `waitingForAppleCancel` stays true and this can be called again.
    public func showAppleSubscriptionManagement() async {
        guard state == .accepted else { return }
        do {
            let entitlements = try await calls.restoreEntitlements(userId: userId)
            let apple = entitlements.first { $0.source == .storeKit && $0.storekitOriginalTransactionId != nil }
            var renewing = apple?.willRenew ?? false
            if let otid = apple?.storekitOriginalTransactionId {
                renewing = try await calls.storeKitSubscriptionStatus(originalTransactionId: otid).autoRenewStatus == 1
            }
            if let checkout {
                try? await calls.reportAppleRenewal(
                    transactionId: checkout.transactionId, renewing: renewing, appStoreSubscriptionEnd: apple?.expiresAt)
            }
            checkoutError = nil
            waitingForAppleCancel = renewing
            if !renewing { apply(.appleRenewalOff) }
        } catch {
            checkoutError = error.message
            waitingForAppleCancel = true
        }
    }

    /// Dismisses from any state: at once on screen and in the cache, then on the server.
    public func dismiss() async {
        apply(.dismiss)
        offerData = nil
        dismissals.set(.init(dismissedAt: Date(), synced: false), for: userId)
        do {
            try await calls.recordOfferDismissed(userId: userId, variantId: nil, idempotencyKey: SaveDeskClient.newIdempotencyKey())
            dismissals.set(.init(dismissedAt: Date(), synced: true), for: userId)
        } catch {
            loadError = "dismissed here; the server will be told when it answers (\(error.message))"
        }
    }

    /// Clears the dismissal (here and on the server) and evaluates again.
    public func resetDismissedState() async {
        do {
            _ = try await calls.resetOfferDismissal(customerId: userId, idempotencyKey: SaveDeskClient.newIdempotencyKey())
        } catch {
            loadError = error.message
            return
        }
        dismissals.set(nil, for: userId)
        apply(.resetDismissal)
        await refresh()
    }

    private func apply(_ event: MigrationOffer.Event) {
        do {
            let next = try MigrationOffer.transition(from: state, on: event)
            if next != state { state = next }
            if !state.carriesOfferData, offerData != nil { offerData = nil }
        } catch {
            checkoutError = error.description
        }
    }
}
