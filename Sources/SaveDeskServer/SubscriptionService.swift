import Foundation
import RetentionDomain
import SQLKit

/// Owns the transactions of every subscription change. Each mutation runs in one transaction
/// that settles due billing first, applies the change, and writes its audit row and its
/// idempotency record; any error rolls all of it back.
final class SubscriptionService: Sendable {
    let store: Store
    let config: ServerConfig
    /// The server's clock: live data's time, and test data's before the test clock's offset.
    let clock: any ServerClock
    let testClock: TestClock
    let ledger: BillingLedger

    /// How long an Idempotency-Key answers as its first request did.
    static let idempotencyLifetime: Int64 = 86_400

    init(store: Store, config: ServerConfig, clock: any ServerClock, testClock: TestClock = TestClock(isAdjustable: false)) {
        self.store = store
        self.config = config
        self.clock = clock
        self.testClock = testClock
        self.ledger = BillingLedger(config: config)
    }

    /// The time of the data the current request sees: live time, or test time (the server's clock
    /// plus the test clock's offset). Outside a request: live time.
    func now() -> Date { now(livemode: RequestScope.current?.livemode ?? true) }

    func now(livemode: Bool) -> Date {
        livemode ? clock.now() : clock.now().addingTimeInterval(TimeInterval(testClock.offsetSeconds))
    }

    /// Reads the test clock's offset from the database.
    func loadTestClock() async throws {
        let offset = try await store.read { db in
            try await db.select().column("offset_seconds").from("test_clock").where("id", .equal, 1).first()?
                .decode(column: "offset_seconds", as: Int64.self)
        }
        testClock.set(offsetSeconds: offset ?? 0)
    }

    /// What a change produced: its output, and the subscription before and after for the audit.
    /// Only a real change is audited: a repeat that changes nothing answers as the first did.
    struct Change<Output: Sendable>: Sendable {
        var output: Output
        var before: SubscriptionRecord?
        var after: SubscriptionRecord?
        /// Whether anything was written; by default, whether the subscription changed (or, with no
        /// subscription involved, true).
        var changed: Bool?

        init(output: Output, before: SubscriptionRecord?, after: SubscriptionRecord?, changed: Bool? = nil) {
            self.output = output
            self.before = before
            self.after = after
            self.changed = changed
        }

        var isChange: Bool { changed ?? (before == nil && after == nil ? true : before != after) }
    }

    // MARK: The transaction every mutation goes through

    func mutate<Request: Encodable & Sendable, Output: Codable & Sendable>(
        operation: String, request: Request, idempotencyKey: String?, customerId: String, action: String,
        alsoLocking others: [String] = [], _ change: (any SQLDatabase, Int64) async throws -> Change<Output>
    ) async throws -> Output {
        guard let scope = RequestScope.current else { throw SaveDeskError.unauthorized("no API key") }
        let parameters = try Self.json(request)
        return try await idempotent(operation: operation, request: request, idempotencyKey: idempotencyKey, key: "customer:" + customerId, alsoLocking: others) { db in
            let now = self.now().unixSeconds
            try await settle(db, customerId: customerId, now: now)
            let result = try await change(db, now)
            if result.isChange {
                try await db.insert(AuditRecord(
                    id: AuditID.next(), at: now, actor: scope.actor, customerId: customerId,
                    action: action, parameters: parameters, beforeState: try result.before.map(Self.json),
                    afterState: try result.after.map(Self.json), requestId: scope.requestId
                ), into: "audit_events")
            }
            return result.output
        }.output
    }

    /// Runs `body` in one transaction that honours an Idempotency-Key for operations that are not
    /// one customer's change (the test clock, the simulators): a repeat within the key's lifetime
    /// answers as the first did and runs nothing. `key` names what it changes (see
    /// `Store.transaction`); by default, the Idempotency-Key.
    func idempotent<Request: Encodable & Sendable, Output: Codable & Sendable>(
        operation: String, request: Request, idempotencyKey: String?, key: String? = nil, alsoLocking others: [String] = [],
        _ body: (any SQLDatabase) async throws -> Output
    ) async throws -> (output: Output, replayed: Bool) {
        guard let scope = RequestScope.current else { throw SaveDeskError.unauthorized("no API key") }
        let fingerprint = try idempotencyKey == nil ? "" : scope.fingerprint ?? Fingerprint.of(request)
        return try await store.transaction(key: key ?? idempotencyKey.map { "idempotency:" + $0 }, alsoLocking: others) { db in
            if let key = idempotencyKey, let stored = try await storedResponse(db, key: key, operation: operation, principal: scope.principal) {
                guard stored.fingerprint == fingerprint else {
                    throw SaveDeskError.unprocessable("this Idempotency-Key was already used with a different request", code: "idempotency_key_reused")
                }
                return (try JSONDecoder().decode(Output.self, from: Data(stored.body.utf8)), true)
            }
            let output = try await body(db)
            if let key = idempotencyKey {
                try await db.insert(into: "idempotency_records")
                    .columns("idempotency_key", "route", "principal", "fingerprint", "body", "created_at")
                    .values(SQLBind(key), SQLBind(operation), SQLBind(scope.principal), SQLBind(fingerprint),
                            SQLBind(try Self.json(output)), SQLBind(clock.now().unixSeconds))
                    .run()
            }
            return (output, false)
        }
    }

    /// The stored answer of an Idempotency-Key within its lifetime. An expired one is removed, so
    /// the key can be used afresh.
    func storedResponse(
        _ db: any SQLDatabase, key: String, operation: String, principal: String
    ) async throws -> (fingerprint: String, body: String)? {
        guard let row = try await db.select().columns("fingerprint", "body", "created_at").from("idempotency_records")
            .where("idempotency_key", .equal, key).where("route", .equal, operation).where("principal", .equal, principal).first()
        else { return nil }
        guard try row.decode(column: "created_at", as: Int64.self) > clock.now().unixSeconds - Self.idempotencyLifetime else {
            try await db.delete(from: "idempotency_records").where("idempotency_key", .equal, key)
                .where("route", .equal, operation).where("principal", .equal, principal).run()
            return nil
        }
        return (try row.decode(column: "fingerprint", as: String.self), try row.decode(column: "body", as: String.self))
    }

    /// The fingerprint an Idempotency-Key is bound to, if it was used within its lifetime (the API
    /// middleware refuses a different request before anything else is checked).
    func storedFingerprint(key: String, operation: String, principal: String) async throws -> String? {
        let cutoff = clock.now().unixSeconds - Self.idempotencyLifetime
        return try await store.read { db in
            try await db.select().column("fingerprint").from("idempotency_records")
                .where("idempotency_key", .equal, key).where("route", .equal, operation).where("principal", .equal, principal)
                .where("created_at", .greaterThan, cutoff).first()?.decode(column: "fingerprint", as: String.self)
        }
    }

    /// Compact JSON with snake_case keys (the wire's style) for audit rows and stored responses.
    static func json(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        encoder.keyEncodingStrategy = .convertToSnakeCase
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    // MARK: Lookups inside a transaction

    func customer(_ db: any SQLDatabase, id: String) async throws -> CustomerRecord {
        guard !id.isEmpty else { throw SaveDeskError.badRequest("user_id must not be empty", code: "missing_user_id") }
        // A key sees only customers of its own mode: to a test key a live customer does not exist.
        guard let customer = try await db.customer(id: id), customer.livemode == (RequestScope.current?.livemode ?? customer.livemode)
        else {
            throw SaveDeskError.notFound("no customer with id \"\(id)\"", code: "unknown_user")
        }
        return customer
    }

    func product(_ id: String) throws(SaveDeskError) -> ServerConfig.ProductConfig {
        guard let product = config.product(id: id) else {
            throw .notFound("no product \"\(id)\" in the catalog", code: "unknown_product")
        }
        return product
    }

    /// The subscription an action on (customer, product) applies to: the web one when there is
    /// one; an App-Store-only product is the customer's own to change (422 with the steps).
    func target(
        _ db: any SQLDatabase, customer: CustomerRecord, product: ServerConfig.ProductConfig, action: String
    ) async throws -> SubscriptionRecord {
        let subscriptions = try await db.subscriptions(customerId: customer.id).filter { $0.productId == product.id }
        let web = subscriptions.filter { $0.source == .web }
        if let live = web.last(where: { BillingLedger.liveStatuses.contains($0.entitlementStatus) }) { return live }
        if subscriptions.contains(where: { $0.source == .appStore }) {
            throw SaveDeskError.managedByAppStore(productName: product.displayName, action: action)
        }
        if let ended = web.last { return ended }
        throw SaveDeskError.notFound("\(customer.name) has no \(product.displayName) subscription", code: "no_subscription")
    }

    /// Applies every due billing transition of a customer's subscriptions, with audit rows
    /// written as the billing system. Returns the steps taken, by subscription.
    @discardableResult
    func settle(_ db: any SQLDatabase, customerId: String, now: Int64) async throws -> [(subscriptionId: String, steps: [String])] {
        guard let customer = try await db.customer(id: customerId) else { return [] }
        var taken: [(subscriptionId: String, steps: [String])] = []
        let all = try await db.subscriptions(customerId: customerId)
        for var subscription in all where subscription.source == .web {
            let before = subscription
            let discounts = try await db.discounts(subscriptionId: subscription.id)
            let group = config.product(id: subscription.productId)?.subscriptionGroupId
            let apple = all.filter {
                $0.source == .appStore && $0.entitlementStatus == .active && config.product(id: $0.productId)?.subscriptionGroupId == group
            }.max { ($0.currentPeriodEnd ?? 0) < ($1.currentPeriodEnd ?? 0) }
            let (charges, steps) = ledger.settle(
                &subscription, discounts: discounts, cardFailing: customer.cardFailing, now: now,
                appStore: apple.map { ($0.currentPeriodEnd ?? 0, $0.willRenew) }
            )
            guard subscription != before else { continue }
            taken.append((subscription.id, steps))
            subscription.updatedAt = now
            try await db.update(subscription)
            for charge in charges { try await db.insert(charge, into: "charges") }
            try await db.insert(AuditRecord(
                id: AuditID.next(), at: now, actor: "billing", customerId: customerId,
                action: "billing.settle", parameters: try Self.json(["steps": steps]),
                beforeState: try Self.json(before), afterState: try Self.json(subscription),
                requestId: RequestScope.current?.requestId ?? "billing"
            ), into: "audit_events")
        }
        return taken
    }
}
