import Foundation
import Synchronization

/// What the server learns about one request while it answers it, for its log line and its
/// metrics: its id (also the `X-Request-Id` of the answer and the `request_id` of every log line
/// written while it runs), the operation it turned out to be, who asked, and the error code of a
/// refusal. The access log makes one per request; the layers that learn something fill it in.
/// It is never read to decide anything.
final class RequestTrace: Sendable {
    struct Facts: Sendable {
        /// The API operation (its operationId), or the name of another route; nil: no route.
        var operation: String?
        /// The actor of the request's scope (an operator's name, "app", "app_store"), never a key.
        var actor: String?
        var livemode: Bool?
        /// The envelope's code when the answer is an error.
        var code: String?
    }

    let id: String
    private let facts = Mutex(Facts())

    init(id: String = RequestScope.newRequestId()) {
        self.id = id
    }

    var current: Facts { facts.withLock { $0 } }

    func update(_ change: (inout Facts) -> Void) {
        facts.withLock { change(&$0) }
    }

    /// The trace of the request the running task answers (set by the access log around it).
    @TaskLocal static var running: RequestTrace?

    /// Records facts on the running request's trace, if there is one.
    static func note(_ change: (inout Facts) -> Void) {
        running?.update(change)
    }
}
