import Foundation
import RetentionDomain

/// Rows of the store. Times are Unix seconds; flags are Bool (INTEGER 0/1 in SQL).
struct CustomerRecord: Codable, Hashable, Sendable {
    /// What kind of customer a row is: a demo walk-through (with its story), any other customer,
    /// or generated demo history. The listing shows them in that order.
    enum Kind: String, Codable, Hashable, Sendable, CaseIterable, TextColumnValue {
        case story, customer, generated

        var listRank: Int {
            switch self {
            case .story: 0
            case .customer: 1
            case .generated: 2
            }
        }
    }

    var id: String
    var name: String
    var email: String
    var country: String?
    var createdAt: Int64
    var cardFailing: Bool
    /// Live data (true) or test data; a key sees only data of its own mode.
    var livemode: Bool = false
    var kind: Kind = .customer
    /// A demo story's one line: what to try with this customer.
    var story: String?
    /// The digest of the publishable key whose app call created this customer (a user id the
    /// server had not seen); nil for customers an operator, the import or the seed made. The
    /// key's daily cap counts these.
    var createdBy: String?
    /// The `appAccountToken` the app sets on its App Store purchases for this user (a UUID, lower
    /// case): signed App Store data carrying it attaches to this customer.
    var appAccountToken: String?
    /// The customer's id at a payment provider that bills them on the web elsewhere (imported).
    var billingCustomerId: String?

    /// The column names, spelled out (see `SubscriptionRecord.CodingKeys`): a search page decodes
    /// its rows without converting keys.
    enum CodingKeys: String, CodingKey {
        case id, name, email, country, createdAt = "created_at", cardFailing = "card_failing", livemode, kind, story
        case listRank = "list_rank", createdBy = "created_by", appAccountToken = "app_account_token", billingCustomerId = "billing_customer_id"
    }

    init(
        id: String, name: String, email: String, country: String?, createdAt: Int64, cardFailing: Bool, livemode: Bool = false,
        kind: Kind = .customer, story: String? = nil, createdBy: String? = nil, appAccountToken: String? = nil, billingCustomerId: String? = nil
    ) {
        self.createdBy = createdBy
        self.appAccountToken = appAccountToken
        self.billingCustomerId = billingCustomerId
        self.id = id
        self.name = name
        self.email = email
        self.country = country
        self.createdAt = createdAt
        self.cardFailing = cardFailing
        self.livemode = livemode
        self.kind = kind
        self.story = story
    }

    init(from decoder: any Decoder) throws {
        let values = try decoder.container(keyedBy: CodingKeys.self)
        id = try values.decode(String.self, forKey: .id)
        name = try values.decode(String.self, forKey: .name)
        email = try values.decode(String.self, forKey: .email)
        country = try values.decodeIfPresent(String.self, forKey: .country)
        createdAt = try values.decode(Int64.self, forKey: .createdAt)
        cardFailing = try values.decode(Bool.self, forKey: .cardFailing)
        livemode = try values.decode(Bool.self, forKey: .livemode)
        kind = try values.decodeIfPresent(Kind.self, forKey: .kind) ?? .customer
        story = try values.decodeIfPresent(String.self, forKey: .story)
        createdBy = try values.decodeIfPresent(String.self, forKey: .createdBy)
        appAccountToken = try values.decodeIfPresent(String.self, forKey: .appAccountToken)
        billingCustomerId = try values.decodeIfPresent(String.self, forKey: .billingCustomerId)
    }

    /// A user id the server has not seen, as the request's mode sees it: a customer with nothing
    /// yet (no name, email or country: the app has not said).
    static func new(id: String, livemode: Bool, at time: Int64) -> CustomerRecord {
        CustomerRecord(id: id, name: "", email: "", country: nil, createdAt: time, cardFailing: false, livemode: livemode)
    }

    /// What the SDK sends as `user_id` when it has none (funnel events, offer impressions):
    /// never a customer.
    static let anonymous = "anonymous"

    /// What a person reads for this customer: the name, or the id when there is none.
    var displayName: String { name.isEmpty ? id : name }

    /// Its row: the listing's rank goes with its kind.
    func encode(to encoder: any Encoder) throws {
        var values = encoder.container(keyedBy: CodingKeys.self)
        try values.encode(id, forKey: .id)
        try values.encode(name, forKey: .name)
        try values.encode(email, forKey: .email)
        try values.encode(country, forKey: .country)
        try values.encode(createdAt, forKey: .createdAt)
        try values.encode(cardFailing, forKey: .cardFailing)
        try values.encode(livemode, forKey: .livemode)
        try values.encode(kind, forKey: .kind)
        try values.encode(story, forKey: .story)
        try values.encode(kind.listRank, forKey: .listRank)
        try values.encode(createdBy, forKey: .createdBy)
        try values.encode(appAccountToken, forKey: .appAccountToken)
        try values.encode(billingCustomerId, forKey: .billingCustomerId)
    }
}

struct SubscriptionRecord: Codable, Hashable, Sendable {
    enum Source: String, Codable, Sendable, TextColumnValue { case web, appStore = "app_store" }

    var id: String
    var customerId: String
    var productId: String
    var source: Source
    /// An `Entitlement.Status` wire value.
    var status: String
    var willRenew: Bool
    var isTrial: Bool
    /// "free_trial" or "migration".
    var trialType: String?
    var startedAt: Int64
    var currentPeriodEnd: Int64?
    var trialEndsAt: Int64?
    var cancelledAt: Int64?
    var accessUntil: Int64?
    var cancelReason: String?
    var pausedAt: Int64?
    var pauseResumesAt: Int64?
    var gracePeriodEndsAt: Int64?
    var pastDueSince: Int64?
    var expirationIntent: Int?
    var originalTransactionId: String?
    var priceMicros: Int64
    var currency: String
    var updatedAt: Int64
    var livemode: Bool = false
    /// App Store only: the signedDate (ms) of the newest signed transaction or notification applied.
    /// Older signed data never changes the subscription again.
    var appstoreSignedAt: Int64? = nil
    /// App Store only: the signedDate (ms) of the newest signed renewal info applied; once there is
    /// one, a device's word on auto-renewal is ignored.
    var appstoreRenewalSignedAt: Int64? = nil
    /// Web, on Stripe: the Stripe subscription (`sub_…`) that keeps it.
    var providerId: String? = nil
    /// On Stripe: the time (Stripe's, seconds) of the newest Stripe state applied; an older event
    /// never changes the subscription again.
    var providerSyncedAt: Int64? = nil

    var entitlementStatus: Entitlement.Status { Entitlement.Status(wireValue: status) }

    /// The column names, spelled out: rows decode with `RowRecord` (no key
    /// conversion per column and row, which was a tenth of a busy server's time); encoders that
    /// convert to snake case leave these names as they are.
    enum CodingKeys: String, CodingKey {
        case id, customerId = "customer_id", productId = "product_id", source, status, willRenew = "will_renew"
        case isTrial = "is_trial", trialType = "trial_type", startedAt = "started_at", currentPeriodEnd = "current_period_end"
        case trialEndsAt = "trial_ends_at", cancelledAt = "cancelled_at", accessUntil = "access_until"
        case cancelReason = "cancel_reason", pausedAt = "paused_at", pauseResumesAt = "pause_resumes_at"
        case gracePeriodEndsAt = "grace_period_ends_at", pastDueSince = "past_due_since", expirationIntent = "expiration_intent"
        case originalTransactionId = "original_transaction_id", priceMicros = "price_micros", currency, updatedAt = "updated_at"
        case livemode, appstoreSignedAt = "appstore_signed_at", appstoreRenewalSignedAt = "appstore_renewal_signed_at"
        case providerId = "provider_id", providerSyncedAt = "provider_synced_at"
    }
}

struct DiscountRecord: Codable, Hashable, Sendable {
    var id: String
    var subscriptionId: String
    /// Which offer created it; unique per subscription, so an offer never stacks.
    var offerKey: String
    var percentOff: Int?
    /// A fixed amount off (an upgrade's credit for unused time), applied once.
    var amountOffMicros: Int64? = nil
    var freeDays: Int?
    /// once, repeating, forever (or "free_period").
    var duration: String
    var durationInMonths: Int?
    var startsAt: Int64
    var endsAt: Int64?

    /// Whether a discount applies to a charge made at `time`.
    func applies(at time: Int64) -> Bool {
        guard percentOff != nil || amountOffMicros != nil, time >= startsAt else { return false }
        if let endsAt { return time < endsAt }
        return duration != "once"
    }
}

struct ChargeRecord: Codable, Hashable, Sendable {
    var id: String
    var subscriptionId: String
    var amountMicros: Int64
    var currency: String
    var periodStart: Int64
    var periodEnd: Int64
    /// "paid" or "failed".
    var status: String
    var at: Int64
}

extension ChargeRecord {
    /// A charge for one period of a subscription, made at `at`.
    init(subscriptionId: String, amountMicros: Int64, currency: String, from start: Int64, to end: Int64, paid: Bool, at: Int64) {
        self.init(
            id: "ch_" + UUID.random().uuidString.lowercased(), subscriptionId: subscriptionId, amountMicros: amountMicros,
            currency: currency, periodStart: start, periodEnd: end, status: paid ? "paid" : "failed", at: at
        )
    }
}

struct AuditRecord: Codable, Hashable, Sendable {
    var id: String
    var at: Int64
    var actor: String
    var customerId: String
    var action: String
    /// JSON text.
    var parameters: String
    var beforeState: String?
    var afterState: String?
    var requestId: String

    /// The column names, spelled out: every change writes one, and converting keys cost more
    /// than encoding them.
    enum CodingKeys: String, CodingKey {
        case id, at, actor, customerId = "customer_id", action, parameters, beforeState = "before_state", afterState = "after_state"
        case requestId = "request_id"
    }
}

extension Date {
    var unixSeconds: Int64 { Int64(timeIntervalSince1970.rounded(.down)) }
    init(unixSeconds: Int64) { self.init(timeIntervalSince1970: TimeInterval(unixSeconds)) }
}
