import Foundation
import JWTKit

/// Signed data the App Store sends (JWS payloads, Apple's camelCase keys). Claims are checked by
/// `AppStoreVerifier` (bundle id, environment), not by jwt-kit.
protocol AppStoreSignedPayload: JWTPayload {
    /// Whether the payload names the app's bundle (renewal info does not).
    static var carriesBundleId: Bool { get }
    var signedBundleId: String? { get }
    var signedEnvironment: String? { get }
}

/// JWSTransactionDecodedPayload. Dates are milliseconds since 1970.
struct AppStoreTransaction: AppStoreSignedPayload, Equatable {
    var transactionId: String
    var originalTransactionId: String
    var bundleId: String?
    var productId: String
    var purchaseDate: Int64
    var originalPurchaseDate: Int64?
    var expiresDate: Int64?
    var environment: String?
    var type: String?
    var revocationDate: Int64?
    var signedDate: Int64?
    /// The UUID the app set on the purchase for its user (`Product.PurchaseOption.appAccountToken`).
    var appAccountToken: String? = nil
    /// The promotional offer (or offer code) the purchase or renewal redeemed.
    var offerIdentifier: String? = nil
    /// 1 introductory, 2 promotional, 3 offer code, 4 win-back.
    var offerType: Int? = nil

    /// The app account token as SaveDesk keeps it (lower case), if the purchase carries one.
    var accountToken: String? { appAccountToken.map { $0.lowercased() }.flatMap { $0.isEmpty ? nil : $0 } }

    static let carriesBundleId = true
    var signedBundleId: String? { bundleId }
    var signedEnvironment: String? { environment }
    func verify(using algorithm: some JWTAlgorithm) async throws {}
}

/// JWSRenewalInfoDecodedPayload.
struct AppStoreRenewalInfo: AppStoreSignedPayload, Equatable {
    var originalTransactionId: String
    var productId: String
    var autoRenewStatus: Int
    var expirationIntent: Int?
    var gracePeriodExpiresDate: Int64?
    var isInBillingRetryPeriod: Bool?
    var environment: String?
    var signedDate: Int64?

    static let carriesBundleId = false
    var signedBundleId: String? { nil }
    var signedEnvironment: String? { environment }
    func verify(using algorithm: some JWTAlgorithm) async throws {}
}

/// App Store Server Notifications V2 (`responseBodyV2DecodedPayload`).
struct AppStoreNotification: AppStoreSignedPayload, Equatable {
    struct Payload: Codable, Equatable, Sendable {
        var bundleId: String?
        var environment: String?
        var signedTransactionInfo: String?
        var signedRenewalInfo: String?
        var status: Int?
    }

    var notificationType: String
    var subtype: String?
    var notificationUUID: String
    var data: Payload
    var signedDate: Int64?

    static let carriesBundleId = true
    var signedBundleId: String? { data.bundleId }
    var signedEnvironment: String? { data.environment }
    func verify(using algorithm: some JWTAlgorithm) async throws {}
}

/// The App Store's real-time retention request (Retention Messaging API,
/// `DecodedRealtimeRequestBody`): a subscriber opened Apple's cancel page. It names no bundle;
/// `appAppleId` says whose app it is.
struct AppStoreRetentionRequest: AppStoreSignedPayload, Equatable {
    var originalTransactionId: String
    var appAppleId: Int64
    var productId: String
    var userLocale: String
    var requestIdentifier: String
    var environment: String?
    var signedDate: Int64

    static let carriesBundleId = false
    var signedBundleId: String? { nil }
    var signedEnvironment: String? { environment }
    func verify(using algorithm: some JWTAlgorithm) async throws {}
}
