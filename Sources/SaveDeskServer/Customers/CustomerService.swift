import Foundation
import RetentionDomain
import SaveDeskAPI

/// Customers an operator brings: one created or updated through the Desk API (audited), or many
/// from a file (`CustomerImport`). Both hold values to `CustomerFields` and store them through
/// `upsert`, so a customer is the same whichever door it came in by.
final class CustomerService: Sendable {
    typealias Schemas = Components.Schemas
    let store: Store
    let changes: ChangeTransaction
    let clock: DataClock

    init(store: Store, changes: ChangeTransaction, clock: DataClock) {
        self.store = store
        self.changes = changes
        self.clock = clock
    }

    /// What an upsert did.
    enum Outcome: Equatable, Sendable {
        case created(CustomerRecord)
        case updated(before: CustomerRecord, after: CustomerRecord)
        case unchanged(CustomerRecord)

        var record: CustomerRecord {
            switch self {
            case .created(let record), .updated(_, let record), .unchanged(let record): record
            }
        }
    }

    /// The values checked by `CustomerFields`, or 422 `invalid_customer` naming each problem.
    static func checked(
        id: String, name: String?, email: String?, country: String?, appAccountToken: String?, billingCustomerId: String?,
        originalTransactionIds: [String]?
    ) throws(SaveDeskError) -> CustomerFields.Values {
        switch CustomerFields.Values.check(
            id: id, name: name, email: email, country: country, appAccountToken: appAccountToken, billingCustomerId: billingCustomerId,
            originalTransactionIds: originalTransactionIds ?? []
        ) {
        case .success(let values): return values
        case .failure(let problems):
            throw .unprocessable(problems.list.map(\.description).joined(separator: "; "), code: "invalid_customer")
        }
    }

    /// Stores `values` for a customer of `livemode` inside the caller's transaction: a new one made,
    /// or the given fields of an existing one changed (fields not given are left as they are;
    /// original transaction ids are linked, never unlinked). A customer of the other mode with the
    /// id, or another customer holding the app account token, is refused (409).
    static func upsert(_ values: CustomerFields.Values, livemode: Bool, _ data: Repositories, now: Int64) async throws -> Outcome {
        let existing = try await data.customers.find(id: values.id)
        if let existing, existing.livemode != livemode {
            throw SaveDeskError(status: 409, code: "user_id_in_other_mode",
                                "customer \(values.id) is \(existing.livemode ? "live" : "test") data; ids are one space across the modes")
        }
        if let token = values.appAccountToken, let holder = try await data.customers.find(appAccountToken: token, livemode: livemode),
            holder.id != values.id
        {
            throw SaveDeskError(status: 409, code: "app_account_token_taken", "customer \(holder.id) holds app account token \(token)")
        }
        var record = existing ?? CustomerRecord.new(id: values.id, livemode: livemode, at: now)
        if let name = values.name { record.name = name }
        if let email = values.email { record.email = email }
        if let country = values.country { record.country = country }
        if let token = values.appAccountToken { record.appAccountToken = token }
        if let billing = values.billingCustomerId { record.billingCustomerId = billing }
        if existing == nil {
            try await data.customers.insert(record)
        } else if record != existing {
            try await data.customers.update(record)
        }
        var linked = false
        for otid in values.originalTransactionIds where try await data.customers.linked(originalTransactionId: otid, livemode: livemode) != values.id {
            try await data.customers.link(originalTransactionIds: [otid], to: values.id, livemode: livemode)
            linked = true
        }
        guard let before = existing else { return .created(record) }
        return record != before || linked ? .updated(before: before, after: record) : .unchanged(record)
    }

    /// An operator's new customer (409 `customer_exists` when the id is taken), audited.
    func create(_ values: CustomerFields.Values, scope: RequestScope, idempotencyKey: String?, request: some Encodable & Sendable) async throws {
        try await write(values, scope: scope, idempotencyKey: idempotencyKey, request: request, operation: "createCustomer") { existing in
            if existing != nil { throw SaveDeskError.conflict("customer \(values.id) exists; update it instead", code: "customer_exists") }
        }
    }

    /// An operator's change to an existing customer (404 when there is none), audited.
    func update(_ values: CustomerFields.Values, scope: RequestScope, idempotencyKey: String?, request: some Encodable & Sendable) async throws {
        try await write(values, scope: scope, idempotencyKey: idempotencyKey, request: request, operation: "updateCustomer") { existing in
            if existing == nil { throw SaveDeskError.notFound("no customer with id \"\(RequestValidator.quote(values.id))\"", code: "unknown_user") }
        }
    }

    private func write(
        _ values: CustomerFields.Values, scope: RequestScope, idempotencyKey: String?, request: some Encodable & Sendable, operation: String,
        checkExisting: @escaping (CustomerRecord?) throws -> Void
    ) async throws {
        _ = try await changes.idempotent(
            scope, operation: operation, request: request, idempotencyKey: idempotencyKey, key: "customer:" + values.id
        ) { data -> Schemas.StatusResponse in
            try await ChangeTransaction.checkVersion(data, customerId: values.id, scope: scope)
            let now = clock.now(scope).unixSeconds
            try checkExisting(try await data.customers.find(id: values.id).flatMap { $0.livemode == scope.livemode ? $0 : nil })
            let outcome = try await Self.upsert(values, livemode: scope.livemode, data, now: now)
            if case .unchanged = outcome { return .init(status: "unchanged") }
            let before: CustomerRecord? = if case .updated(let before, _) = outcome { before } else { nil }
            try await data.audit.append(AuditRecord(
                id: AuditID.next(), at: now, actor: scope.actor, customerId: values.id,
                action: before == nil ? "customer.created" : "customer.updated", parameters: try ChangeTransaction.json(request),
                beforeState: try before.map(ChangeTransaction.json), afterState: try ChangeTransaction.json(outcome.record),
                requestId: scope.requestId
            ))
            return .init(status: before == nil ? "created" : "updated")
        }
    }
}
