import Foundation
import RetentionDomain
import TOMLKit

/// Demo customers, read from a seed TOML with times relative to `now`, and applied to an empty
/// store in one transaction.
public enum DemoSeed {
    /// The demo config and seed shipped with SaveDesk, found from any working directory.
    public static var demoConfigPath: String? { Bundle.module.path(forResource: "demo-config", ofType: "toml", inDirectory: "Files") }
    public static var demoSeedPath: String? { Bundle.module.path(forResource: "demo-seed", ofType: "toml", inDirectory: "Files") }

    struct Customer {
        var record: CustomerRecord
        var subscriptions: [SubscriptionRecord]
        var dismissal: (by: String, at: Int64)?
        var history: [AuditRecord]
    }

    /// Reads a seed file; every problem is reported with its path.
    static func read(_ text: String, file: String, config: ServerConfig, now: Date) throws(InvalidConfig) -> [Customer] {
        let table: TOMLTable
        do {
            table = try TOMLTable(string: text)
        } catch {
            throw InvalidConfig(file: file, issues: [ConfigIssue(path: "", message: "not valid TOML: \(error)")])
        }
        let issues = IssueCollector()
        let root = TOMLNode(table: table, path: "", issues: issues)
        root.allowOnly(["customers"])
        let nowSeconds = now.unixSeconds
        func ago(_ days: Int?) -> Int64? { days.map { nowSeconds - Int64($0) * BillingLedger.day } }
        func ahead(_ days: Int?) -> Int64? { days.map { nowSeconds + Int64($0) * BillingLedger.day } }
        var ids = Set<String>()
        let customers = root.tables("customers").compactMap { node -> Customer? in
            node.allowOnly([
                "id", "name", "story", "email", "country", "joined_days_ago", "card_failing", "subscriptions", "history",
                "dismissed_switch_by", "dismissed_switch_days_ago", "livemode",
            ])
            guard let id = node.string("id"), let name = node.string("name"), let email = node.string("email") else { return nil }
            if !ids.insert(id).inserted { node.issues.add(node.child("id"), "duplicate customer id \"\(id)\"") }
            // A customer with a story is one of the demo's walk-throughs: it lists first.
            let story = node.string("story", required: false)
            let customer = CustomerRecord(
                id: id, name: name, email: email, country: node.string("country", required: false),
                createdAt: ago(node.int("joined_days_ago", required: false, in: 0...10_000) ?? 0) ?? nowSeconds,
                cardFailing: node.bool("card_failing", default: false),
                // Seeded customers are test data unless the seed says otherwise.
                livemode: node.bool("livemode", default: false), kind: story == nil ? .customer : .story, story: story
            )
            let subscriptions = node.tables("subscriptions").enumerated().compactMap { index, sub -> SubscriptionRecord? in
                sub.allowOnly([
                    "product", "source", "status", "will_renew", "started_days_ago", "period_ends_in_days", "trial_type",
                    "trial_ends_in_days", "cancelled_days_ago", "cancel_reason", "paused_days_ago", "resumes_in_days",
                    "grace_ends_in_days", "past_due_days_ago", "expiration_intent", "original_transaction_id",
                ])
                guard let productId = sub.string("product") else { return nil }
                guard let product = config.product(id: productId) else {
                    sub.issues.add(sub.child("product"), "no product \"\(productId)\" in the config")
                    return nil
                }
                let sourceText = sub.string("source") ?? "web"
                guard let source = SubscriptionRecord.Source(rawValue: sourceText) else {
                    sub.issues.add(sub.child("source"), "must be web or app_store, got \"\(sourceText)\"")
                    return nil
                }
                let statusText = sub.string("status") ?? "active"
                let status = Entitlement.Status(wireValue: statusText)
                if !status.isKnown { sub.issues.add(sub.child("status"), "unknown status \"\(statusText)\"") }
                guard let price = source == .web ? product.webPrice ?? product.appStorePrice : product.appStorePrice ?? product.webPrice
                else { return nil }
                let trialType = sub.string("trial_type", required: false)
                let cancelled = ago(sub.int("cancelled_days_ago", required: false))
                let periodEnd = ahead(sub.int("period_ends_in_days", required: false))
                return SubscriptionRecord(
                    id: "sub_\(id.replacingOccurrences(of: "cus_", with: ""))_\(index + 1)", customerId: id,
                    productId: productId, source: source, status: status.wireValue,
                    willRenew: sub.bool("will_renew", default: true), isTrial: trialType != nil, trialType: trialType,
                    startedAt: ago(sub.int("started_days_ago", required: false)) ?? nowSeconds,
                    currentPeriodEnd: periodEnd, trialEndsAt: ahead(sub.int("trial_ends_in_days", required: false)),
                    cancelledAt: cancelled, accessUntil: cancelled != nil || status == .expired ? periodEnd : nil,
                    cancelReason: sub.string("cancel_reason", required: false),
                    pausedAt: ago(sub.int("paused_days_ago", required: false)),
                    pauseResumesAt: ahead(sub.int("resumes_in_days", required: false)),
                    gracePeriodEndsAt: ahead(sub.int("grace_ends_in_days", required: false)),
                    pastDueSince: ago(sub.int("past_due_days_ago", required: false)),
                    expirationIntent: sub.int("expiration_intent", required: false, in: 1...5),
                    originalTransactionId: sub.string("original_transaction_id", required: false),
                    priceMicros: price.amountMicros, currency: price.currencyCode, updatedAt: nowSeconds,
                    livemode: customer.livemode
                )
            }
            let history = node.tables("history").enumerated().compactMap { index, event -> AuditRecord? in
                event.allowOnly(["action", "days_ago", "actor", "note"])
                guard let action = event.string("action"), let actor = event.string("actor") else { return nil }
                let note = event.string("note", required: false) ?? ""
                return AuditRecord(
                    id: "ev_seed_\(id)_\(index)", at: ago(event.int("days_ago", required: false) ?? 0) ?? nowSeconds,
                    actor: actor, customerId: id, action: action,
                    parameters: (try? ChangeTransaction.json(["note": note])) ?? "{}",
                    beforeState: nil, afterState: nil, requestId: "seed"
                )
            }
            let dismissal = node.string("dismissed_switch_by", required: false).map {
                (by: $0, at: ago(node.int("dismissed_switch_days_ago", required: false) ?? 0) ?? nowSeconds)
            }
            return Customer(record: customer, subscriptions: subscriptions, dismissal: dismissal, history: history)
        }
        guard issues.issues.isEmpty else { throw InvalidConfig(file: file, issues: issues.issues) }
        return customers
    }

    /// Applies a seed file to the store at `databasePath` when it has no customers yet.
    /// Returns the number of customers added (0 when the store already had some).
    public static func apply(file: String, config: ServerConfig, databasePath: String, now: Date = Date()) async throws -> Int {
        guard let data = FileManager.default.contents(atPath: file), let text = String(data: data, encoding: .utf8) else {
            throw InvalidConfig(file: file, issues: [ConfigIssue(path: "", message: "cannot read the file")])
        }
        let customers = try read(text, file: file, config: config, now: now)
        let store = try await Store.open(path: databasePath, logger: .init(label: "savedesk.seed"))
        do {
            let added = try await insert(customers, into: store)
            await store.close()
            return added
        } catch {
            await store.close()
            throw error
        }
    }

    private static func insert(_ customers: [Customer], into store: Store) async throws -> Int {
        try await store.transaction(key: "seed") { data in
            guard try await data.customers.count(idPrefix: "") == 0 else { return 0 }
            for customer in customers {
                try await data.customers.insert(customer.record)
                for subscription in customer.subscriptions { try await data.ledger.insert(subscription) }
                if let dismissal = customer.dismissal {
                    try await data.switchAndSave.recordDismissal(
                        customerId: customer.record.id, flowType: SwitchAndSaveService.flowType, by: dismissal.by, at: dismissal.at,
                        variantId: nil
                    )
                }
                for event in customer.history { try await data.audit.append(event) }
            }
            return customers.count
        }
    }
}
