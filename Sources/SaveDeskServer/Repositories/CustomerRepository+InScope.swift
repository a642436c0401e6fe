import Foundation
import RetentionDomain

/// The customer lookup every service makes the same way, with the errors the API answers.
///
/// A user id the server has not seen is a customer of the key's mode with nothing yet: reads see
/// a new customer that is not stored (`inScope`), so a storm of reads never grows the database;
/// a write stores it in the same transaction as its change (`ChangeTransaction.customer`). User
/// ids are one space across the two modes: an id whose data is of the other mode is refused,
/// never shared, so test and live data never mix.
extension CustomerRepository {
    /// The stored customer `id` names in `scope`'s mode; nil when the server has not seen it.
    func lookup(_ id: String, _ scope: RequestScope) async throws -> CustomerRecord? {
        guard !id.isEmpty else { throw SaveDeskError.unprocessable("user_id must not be empty", code: "missing_user_id") }
        guard let customer = try await find(id: id) else { return nil }
        guard customer.livemode == scope.livemode else {
            throw SaveDeskError(
                status: 409, code: "user_id_in_other_mode",
                "this user id belongs to \(customer.livemode ? "live" : "test") data; a \(scope.livemode ? "live" : "test") key cannot use it (test and live ids are one space)"
            )
        }
        return customer
    }

    /// The customer `id` names in `scope`'s mode: the stored one, or a new customer with nothing
    /// yet (not stored) made at `time`.
    func inScope(_ id: String, _ scope: RequestScope, at time: Int64) async throws -> CustomerRecord {
        try await lookup(id, scope) ?? .new(id: id, livemode: scope.livemode, at: time)
    }

    /// The stored customer `id` names, for an operator's call about an existing customer (404
    /// when there is none in the key's mode: an operator names customers that exist, and sees
    /// only its own mode's).
    func existing(_ id: String, _ scope: RequestScope) async throws -> CustomerRecord {
        guard let customer = try await find(id: id), customer.livemode == scope.livemode else {
            throw SaveDeskError.notFound("no customer with id \"\(RequestValidator.quote(id))\"", code: "unknown_user")
        }
        return customer
    }
}
