import Foundation
import RetentionDomain

/// The customer lookup every service makes the same way, with the error the API answers.
extension CustomerRepository {
    /// The customer, if it exists in `scope`'s mode: to a test key a live customer does not exist.
    func inScope(_ id: String, _ scope: RequestScope) async throws -> CustomerRecord {
        guard !id.isEmpty else { throw SaveDeskError.unprocessable("user_id must not be empty", code: "missing_user_id") }
        guard let customer = try await find(id: id), customer.livemode == scope.livemode else {
            throw SaveDeskError.notFound("no customer with id \"\(id)\"", code: "unknown_user")
        }
        return customer
    }
}
