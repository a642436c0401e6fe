/// The desk's live events as agents read them: what a recorded change did, who else is on a
/// customer, and why a change built on a stale view was refused. The server's 409, the console and
/// `savedesk events tail` say these in the same words.
public enum DeskEvents {
    /// What an agent is doing on a customer (a presence).
    public enum Activity: String, Sendable, CaseIterable {
        case viewing
        case cancelFlow = "cancel_flow"
        case switchAndSave = "switch_and_save"
        case left

        /// "viewing", "in a cancel flow", "on the switch card".
        public var phrase: String {
            switch self {
            case .viewing: "viewing"
            case .cancelFlow: "in a cancel flow"
            case .switchAndSave: "on the switch card"
            case .left: "left"
            }
        }
    }

    /// How long a presence lasts without a heartbeat, and how often a console sends one.
    public static let presenceTTLSeconds = 30
    public static let presenceHeartbeatSeconds = 10

    /// What an event of `type` (an audit action) did: "paused the subscription".
    public static func phrase(_ type: String) -> String {
        if let known = phrases[type] { return known }
        if type.hasPrefix("app_store.") {
            let kind = type.dropFirst("app_store.".count).replacingOccurrences(of: "_", with: " ")
            return "reported \(kind)"
        }
        return type.replacingOccurrences(of: "_", with: " ").replacingOccurrences(of: ".", with: ": ")
    }

    /// "Priya (support lead) paused the subscription".
    public static func sentence(actor: String, type: String) -> String {
        "\(actorName(actor)) \(phrase(type))"
    }

    /// "Priya (support lead) is also on this customer (in a cancel flow)".
    public static func presence(operatorName: String, activity: Activity) -> String {
        activity == .viewing
            ? "\(operatorName) is also on this customer"
            : "\(operatorName) is also on this customer (\(activity.phrase))"
    }

    /// The refusal of a change built on a view that changed since it loaded.
    public static func staleView(_ changes: [(actor: String, type: String)]) -> String {
        let said = changes.prefix(3).map { sentence(actor: $0.actor, type: $0.type) }
        let more = changes.count > 3 ? " and \(changes.count - 3) more" : ""
        return "This customer changed since your screen loaded: \(said.joined(separator: "; "))\(more). Look again and confirm."
    }

    /// Who the trail names, as a person reads it.
    static func actorName(_ actor: String) -> String {
        switch actor {
        case "app": "The app"
        case "app_store": "The App Store"
        case "billing": "Billing"
        case "stripe": "Stripe"
        default: actor
        }
    }

    private static let phrases: [String: String] = [
        "checkout.created": "started a checkout",
        "checkout.paid": "paid the checkout",
        "checkout.failed": "saw the checkout fail",
        "checkout.finalized": "finished the checkout",
        "checkout.storekit_status": "reported the App Store subscription's status",
        "subscription.pause": "paused the subscription",
        "subscription.resume": "resumed the subscription",
        "subscription.cancel_at_period_end": "cancelled the subscription at the period's end",
        "subscription.cancel_now": "cancelled the subscription at once",
        "subscription.reactivate": "turned renewal back on",
        "subscription.accept_offer": "accepted the save offer",
        "subscription.upgrade": "upgraded the subscription",
        "billing.settle": "moved the billing on (renewal, trial end or pause end)",
        "cancel_flow.response": "recorded a cancel-flow answer",
        "cancel_flow.offer_code": "handed out an App Store offer code",
        "app_store.transaction_synced": "synced an App Store purchase",
        "app_store.reconciled": "reconciled App Store purchases",
        "app_store.claimed": "claimed an App Store purchase",
        "app_store.claimed_by_another_user": "saw an App Store purchase claimed by another user",
        "app_store.attached": "attached an App Store subscription",
        "app_store.cancellation_read_out": "read out the App Store cancellation steps",
        "app_store.retention_message": "answered Apple's cancel page",
        "app_store.did_change_renewal_status": "reported a renewal change",
        "app_store.did_renew": "reported a renewal",
        "app_store.expired": "reported the subscription expired",
        "app_store.refund": "reported a refund",
        "customer.created": "created the customer",
        "customer.updated": "updated the customer",
        "customer.imported": "imported the customer",
        "portal.session_created": "opened the billing portal",
        "support.note": "added a note",
        "switch_and_save.viewed": "saw the switch offer",
        "switch_and_save.dismissed": "dismissed the switch offer",
        "switch_and_save.dismissal_reset": "reset the switch offer's dismissal",
        "switch_and_save.converted": "switched to web billing",
        "win_back": "sent a win-back offer",
        "customer.billing_customer_linked": "linked the customer to Stripe",
        "stripe.customer.subscription.created": "started a subscription",
        "stripe.customer.subscription.updated": "changed the subscription",
        "stripe.customer.subscription.deleted": "ended the subscription",
        "stripe.customer.subscription.paused": "paused the subscription",
        "stripe.customer.subscription.resumed": "resumed the subscription",
        "stripe.invoice.paid": "was paid",
        "stripe.invoice.payment_succeeded": "was paid",
        "stripe.invoice.payment_failed": "saw a payment fail",
        "stripe.checkout.session.completed": "saw the checkout paid",
        "stripe.reconcile": "brought the subscription back in step after an interrupted change",
    ]
}
