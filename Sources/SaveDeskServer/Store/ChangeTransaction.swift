import RetentionDomain
import Foundation

/// The one transaction every change goes through: due billing settled first, the change, its
/// audit row and its Idempotency-Key's answer, committed together or not at all. A repeat of an
/// Idempotency-Key within its lifetime answers as the first request did and runs nothing.
struct ChangeTransaction: Sendable {
    let store: Store
    let clock: DataClock
    let settlement: Settlement
    /// The budgets of new customers made by app calls (nil: none, as in tools).
    var admission: CustomerAdmission? = nil

    /// How long an Idempotency-Key answers as its first request did.
    static let idempotencyLifetime = Seconds.wholeDay

    /// What a change produced: its output, and the subscription before and after for the audit.
    /// Only a real change is audited: a repeat that changes nothing answers as the first did.
    struct Change<Output: Sendable>: Sendable {
        var output: Output
        var before: SubscriptionRecord?
        var after: SubscriptionRecord?
        /// Whether anything was written; by default, whether the subscription changed (or, with no
        /// subscription involved, true).
        var changed: Bool?
        /// Rows the change writes that nothing in it reads back (a cancel-flow response): written
        /// with its audit row, on PostgreSQL in that row's one statement. A change that has any is
        /// a change.
        var writing: Inserts

        init(output: Output, before: SubscriptionRecord?, after: SubscriptionRecord?, changed: Bool? = nil, writing: Inserts = Inserts()) {
            self.output = output
            self.before = before
            self.after = after
            self.changed = changed
            self.writing = writing
        }

        var isChange: Bool { !writing.isEmpty || (changed ?? (before == nil && after == nil ? true : before != after)) }
    }

    /// One customer's change: `change` runs after the customer's billing is settled, at the
    /// request's data time, and what it returns is audited as `action`.
    func mutate<Request: Encodable & Sendable, Output: Codable & Sendable>(
        _ scope: RequestScope, operation: String, request: Request, idempotencyKey: String?, customerId: String, action: String,
        alsoLocking others: [String] = [], _ change: (Repositories, Int64) async throws -> Change<Output>
    ) async throws -> Output {
        let parameters = try Self.json(request)
        return try await recorded(scope, operation: operation, request: request, idempotencyKey: idempotencyKey, key: "customer:" + customerId, alsoLocking: others) { data in
            try await Self.checkVersion(data, customerId: customerId, scope: scope)
            let now = clock.now(scope).unixSeconds
            try await settlement.settle(data, customerId: customerId, now: now, scope: scope)
            let result = try await change(data, now)
            guard result.isChange else { return (result.output, nil) }
            return (result.output, Audited(row: AuditRecord(
                id: AuditID.next(), at: now, actor: scope.actor, customerId: customerId,
                action: action, parameters: parameters, beforeState: try result.before.map(Self.json),
                afterState: try result.after.map(Self.json), requestId: scope.requestId
            ), writes: result.writing))
        }.output
    }

    /// The version precondition of an operator's change (`RequestScope.expectedVersion`): refused
    /// with 409 when someone else changed the customer after that version, naming what changed.
    /// Checked after an Idempotency-Key's replay, so a retry of the same change is not refused;
    /// the operator's own changes since are not counted (their screen made them).
    static func checkVersion(_ data: Repositories, customerId: String, scope: RequestScope) async throws {
        guard let expected = scope.expectedVersion else { return }
        let changes = try await data.events.changes(customerId: customerId, after: expected, notBy: scope.actor, limit: 10)
        guard !changes.isEmpty else { return }
        throw SaveDeskError(status: 409, code: "customer_changed", DeskEvents.staleView(changes.map { ($0.actor, $0.type) }))
    }

    /// The customer of a write: the stored one, or, for a user id the server has not seen, a new
    /// customer inserted now in the caller's transaction (an app's call is admitted first: its
    /// key's and address's budgets, its key's daily cap).
    @discardableResult
    func customer(_ data: Repositories, id: String, scope: RequestScope, now: Int64) async throws -> CustomerRecord {
        if let customer = try await data.customers.lookup(id, scope) { return customer }
        var customer = CustomerRecord.new(id: id, livemode: scope.livemode, at: now)
        if scope.isPublishable {
            try await admission?.admit(scope) {
                try await data.customers.createdCount(by: scope.principal, since: now - Seconds.wholeDay)
            }
            customer.createdBy = scope.principal
        }
        try await data.customers.insert(customer)
        admission?.metrics?.newCustomer(livemode: scope.livemode)
        return customer
    }

    /// Runs `body` in one transaction that honours an Idempotency-Key for operations that are not
    /// one customer's change (the test clock, funnel events). `key` names what it changes (see
    /// `Store.transaction`); by default, the Idempotency-Key.
    ///
    /// The key's stored answer is read once `key` is held and before the transaction (its
    /// prelude): a request of the same key and the same customer waits for the lock and then reads
    /// the first one's committed answer. The same key used at once for two customers (two locks)
    /// is settled by the answers' primary key: the second insert fails as a lost race, and its
    /// run again reads the first answer and replays it or refuses the request. On PostgreSQL the
    /// first run skips the read when the API middleware found the key free (`recorded`): the
    /// primary key then settles the same customer's repeat the same way.
    func idempotent<Request: Encodable & Sendable, Output: Codable & Sendable>(
        _ scope: RequestScope, operation: String, request: Request, idempotencyKey: String?, key: String? = nil,
        alsoLocking others: [String] = [], _ body: (Repositories) async throws -> Output
    ) async throws -> (output: Output, replayed: Bool) {
        try await recorded(scope, operation: operation, request: request, idempotencyKey: idempotencyKey, key: key, alsoLocking: others) { data in
            (try await body(data), nil)
        }
    }

    /// A change's audit row, and the rows it writes with it (`Change.writing`).
    private struct Audited {
        var row: AuditRecord
        var writes: Inserts
    }

    /// `idempotent`, for a body that also returns its change's audit row: appended at the end,
    /// with the Idempotency-Key's answer and the change's own writes (on PostgreSQL one statement
    /// for all).
    private func recorded<Request: Encodable & Sendable, Output: Codable & Sendable>(
        _ scope: RequestScope, operation: String, request: Request, idempotencyKey: String?, key: String?,
        alsoLocking others: [String], _ body: (Repositories) async throws -> (Output, Audited?)
    ) async throws -> (output: Output, replayed: Bool) {
        let fingerprint = try idempotencyKey == nil ? "" : scope.fingerprint ?? Fingerprint.of(request)
        // On PostgreSQL a key the API middleware found free a moment ago is not read again before
        // the first run (a round trip of every change): were it taken meanwhile, this run's answer
        // fails on the answers' primary key as a lost race, nothing of it stays, and the run again
        // reads the answer here and replays it or refuses the request. SQLite does not run a
        // transaction again: it reads every time (in its writer's turn, at no round trip's cost).
        let freeAtFirst = store.kind == .postgres && scope.idempotencyKeyFree
        var runs = 0
        return try await store.transaction(key: key ?? idempotencyKey.map { "idempotency:" + $0 }, alsoLocking: others, prelude: { data -> IdempotencyAnswer? in
            runs += 1
            guard let idempotencyKey, !(freeAtFirst && runs == 1) else { return nil }
            return try await data.idempotency.find(key: idempotencyKey, operation: operation, principal: scope.principal)
        }) { data, stored in
            if let key = idempotencyKey, let stored {
                guard stored.at > clock.server.now().unixSeconds - Self.idempotencyLifetime else {
                    // Expired: removed, so the key can be used afresh.
                    try await data.idempotency.delete(key: key, operation: operation, principal: scope.principal)
                    return try await (fresh(data), false)
                }
                guard stored.fingerprint == fingerprint else {
                    throw SaveDeskError.unprocessable("this Idempotency-Key was already used with a different request", code: "idempotency_key_reused")
                }
                return (try JSONDecoder().decode(Output.self, from: Data(stored.body.utf8)), true)
            }
            return try await (fresh(data), false)
        }

        /// The change run for the first time; its audit row and its answer stored under the key.
        func fresh(_ data: Repositories) async throws -> Output {
            let (output, audit) = try await body(data)
            let answer = try idempotencyKey.map { key in
                IdempotencyAnswer(
                    key: key, operation: operation, principal: scope.principal, fingerprint: fingerprint,
                    body: try Self.json(output), at: clock.server.now().unixSeconds, livemode: scope.livemode
                )
            }
            if let audit {
                try await data.audit.append(audit.row, answering: answer, with: audit.writes)
            } else if let answer {
                try await data.idempotency.store(answer)
            }
            return output
        }
    }

    /// The fingerprint an Idempotency-Key is bound to, if it was used within its lifetime (the API
    /// middleware refuses a different request before anything else is checked).
    func storedFingerprint(key: String, operation: String, principal: String) async throws -> String? {
        let cutoff = clock.server.now().unixSeconds - Self.idempotencyLifetime
        return try await store.lookup { data in
            try await data.idempotency.fingerprint(key: key, operation: operation, principal: principal, storedAfter: cutoff)
        }
    }

    /// Compact JSON with snake_case keys (the wire's style) for audit rows and stored responses.
    static func json(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        encoder.keyEncodingStrategy = .convertToSnakeCase
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }
}
