import Foundation
import RetentionDomain

/// The server's typed error. Mapped once, at the HTTP boundary, to the wire envelope
/// `{"error": "<message>", "code": "<machine_code>"}` with its status.
public struct SaveDeskError: Error, Hashable, Sendable, CustomStringConvertible {
    public var status: Int
    public var code: String
    public var message: String
    /// Steps the customer must take themselves (for `managed_by_app_store`).
    public var steps: [String]
    /// Seconds before one retry (409 conflicts).
    public var retryAfter: Double?

    public init(status: Int, code: String, _ message: String, steps: [String] = [], retryAfter: Double? = nil) {
        self.status = status
        self.code = code
        self.message = message
        self.steps = steps
        self.retryAfter = retryAfter
    }

    public var description: String { "\(status) \(code): \(message)" }

    public static func badRequest(_ message: String, code: String = "bad_request") -> Self {
        .init(status: 400, code: code, message)
    }
    public static func unauthorized(_ message: String) -> Self { .init(status: 401, code: "unauthorized", message) }
    public static func forbidden(_ message: String, code: String = "forbidden") -> Self {
        .init(status: 403, code: code, message)
    }
    public static func notFound(_ message: String, code: String = "not_found") -> Self {
        .init(status: 404, code: code, message)
    }
    public static func conflict(_ message: String, code: String = "conflict", retryAfter: Double? = nil) -> Self {
        .init(status: 409, code: code, message, retryAfter: retryAfter)
    }
    public static func unprocessable(_ message: String, code: String) -> Self {
        .init(status: 422, code: code, message)
    }

    /// What a customer must do to change an App Store subscription themselves.
    public static func managedByAppStore(productName: String, action: String) -> Self {
        SaveDeskError(
            status: 422, code: "managed_by_app_store",
            "\(productName) is billed by the App Store, so SaveDesk cannot \(action) it; the customer must do it in Settings.",
            steps: AppStore.cancellationSteps(productName: productName)
        )
    }
}
