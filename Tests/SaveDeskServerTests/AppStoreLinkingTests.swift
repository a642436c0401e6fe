import Foundation
import SaveDeskAPI
import Testing

@testable import SaveDeskServer

/// The App Store links itself: signed data carrying the app's `appAccountToken` attaches to the
/// customer holding it, and a notification for a transaction no customer has yet is kept (never
/// dropped) and applied once a customer syncs or claims the transaction.
@Suite("App Store linking")
struct AppStoreLinkingTests {
    let sync = AppStoreSyncTests()

    func transaction(_ otid: String, token: String? = nil) -> AppStoreTransaction {
        var transaction = sync.transaction(otid)
        transaction.appAccountToken = token
        return transaction
    }

    /// A notification about `transaction`, signed by the server's local CA; its answer's status.
    func notify(_ server: TestServer, _ type: String, subtype: String? = nil, _ transaction: AppStoreTransaction) async throws -> String {
        let ca = try sync.ca(server)
        let notification = AppStoreNotification(
            notificationType: type, subtype: subtype, notificationUUID: UUID().uuidString,
            data: .init(bundleId: "com.savedesk.reader", environment: "Sandbox", signedTransactionInfo: try await ca.sign(transaction),
                        signedRenewalInfo: nil, status: nil),
            signedDate: SignedDates.next()
        )
        let payload = try await ca.sign(notification)
        return try await server.client(key: nil).receiveAppStoreNotification(body: .json(.init(signedPayload: payload))).ok.body.json.status
    }

    @Test func aNotificationNoCustomerCanTakeIsKeptThenAppliedWhenTheUserSyncs() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let purchase = transaction("2000000555000001")
        // Apple tells first (the device has not synced yet): kept, not dropped.
        #expect(try await notify(server, "DID_CHANGE_RENEWAL_STATUS", subtype: "AUTO_RENEW_DISABLED", purchase) == "unmatched")
        #expect(try await server.count("appstore_notifications", where: "outcome = 'unmatched' AND signed_payload IS NOT NULL") == 1)
        // A new user's device syncs the purchase (older signed data): the kept notification applies.
        var synced = purchase
        synced.signedDate = (purchase.signedDate ?? 0) - 10
        let jws = try await sync.ca(server).sign(synced)
        let answer = try await server.app.syncStoreKitTransaction(body: .json(.init(jwsRepresentation: jws, userId: "reader-77"))).ok.body.json
        #expect(answer.synced?.owned == true)
        let entitlement = try #require(try await server.app.getEntitlements(query: .init(userId: "reader-77")).ok.body.json.entitlements.first)
        #expect(entitlement.willRenew == false, "Apple's auto-renew off, kept until now, is applied")
        #expect(try await server.count("appstore_notifications", where: "outcome = 'attached_applied' AND signed_payload IS NULL") == 1)
    }

    @Test func theAppAccountTokenAttachesAppleDataToItsCustomer() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let token = "3F2504E0-4F89-11D3-9A0C-0305E82C3301"
        // The app's first purchase for its user carries the token: the customer now holds it.
        let first = try await sync.ca(server).sign(transaction("2000000555000010", token: token))
        _ = try await server.app.syncStoreKitTransaction(body: .json(.init(jwsRepresentation: first, userId: "reader-88"))).ok
        #expect(try await server.count("customers", where: "id = 'reader-88' AND app_account_token = '\(token.lowercased())'") == 1)
        // A second purchase Apple reports before any device syncs it: attached by the token.
        #expect(try await notify(server, "SUBSCRIBED", subtype: "INITIAL_BUY", transaction("2000000555000011", token: token)) == "applied")
        let products = try await server.app.getEntitlements(query: .init(userId: "reader-88")).ok.body.json.entitlements
        #expect(products.count == 2 && products.allSatisfy { $0.source == .storeKit })
        #expect(try await server.count("audit_events", where: "action = 'app_store.attached' AND customer_id = 'reader-88'") == 1)
        // Another user's device syncing a purchase made with this token: it is reader-88's.
        let other = try await sync.ca(server).sign(transaction("2000000555000012", token: token))
        let conflict = try #require(try await server.app.syncStoreKitTransaction(
            body: .json(.init(jwsRepresentation: other, userId: "someone-else"))).ok.body.json.synced)
        #expect(conflict.conflict && conflict.claimAvailable && !conflict.owned)
    }
}
