import Foundation
import RetentionDomain

/// The customer lookup every service makes the same way, with the error the API answers.
extension CustomerRepository {
    /// The customer, if it exists in the request's mode: to a test key a live customer does not exist.
    func inScope(_ id: String) async throws -> CustomerRecord {
        guard !id.isEmpty else { throw SaveDeskError.unprocessable("user_id must not be empty", code: "missing_user_id") }
        guard let customer = try await find(id: id), customer.livemode == (RequestScope.current?.livemode ?? customer.livemode) else {
            throw SaveDeskError.notFound("no customer with id \"\(id)\"", code: "unknown_user")
        }
        return customer
    }
}
