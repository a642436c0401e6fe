import Foundation
import SaveDeskAPI
import Testing

@testable import SaveDeskServer

@Suite("App Store sync and notifications over HTTP")
struct AppStoreSyncTests {
    static let premium = "com.savedesk.reader.premium.monthly"

    func transaction(_ otid: String, product: String = premium, expiresInDays: Double = 30) -> AppStoreTransaction {
        let now = Int64(TestServer.start.timeIntervalSince1970 * 1000)
        return AppStoreTransaction(
            transactionId: "tx_\(UUID().uuidString.prefix(8))", originalTransactionId: otid, bundleId: "com.savedesk.reader",
            productId: product, purchaseDate: now, originalPurchaseDate: now - 200 * 86_400_000,
            expiresDate: now + Int64(expiresInDays * 86_400_000), environment: "Sandbox", type: "Auto-Renewable Subscription",
            revocationDate: nil, signedDate: SignedDates.next()
        )
    }

    /// The server's own local CA, as the demo device signs with it.
    func ca(_ server: TestServer) throws -> LocalStoreKitCA { try LocalStoreKitCA.loadOrCreate(in: server.directory) }

    func sync(_ server: TestServer, user: String, _ payload: AppStoreTransaction) async throws -> Operations.SyncStoreKitTransaction.Output {
        let jws = try await ca(server).sign(payload)
        return try await server.app.syncStoreKitTransaction(body: .json(.init(jwsRepresentation: jws, userId: user)))
    }

    func notify(
        _ server: TestServer, _ type: String, subtype: String? = nil, otid: String, uuid: String = UUID().uuidString,
        renewal: AppStoreRenewalInfo? = nil
    ) async throws -> String {
        let ca = try ca(server)
        let notification = AppStoreNotification(
            notificationType: type, subtype: subtype, notificationUUID: uuid,
            data: .init(bundleId: "com.savedesk.reader", environment: "Sandbox",
                        signedTransactionInfo: try await ca.sign(transaction(otid)),
                        signedRenewalInfo: try await renewal.asyncMap { try await ca.sign($0) }, status: nil),
            signedDate: SignedDates.next()
        )
        let payload = try await ca.sign(notification)
        return try await server.client(key: nil).receiveAppStoreNotification(body: .json(.init(signedPayload: payload))).ok.body.json.status
    }

    @Test func syncedTransactionsUpdateOrCreateTheAppStoreSubscription() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let synced = try #require(try await sync(server, user: "cus_chloe", transaction("2000000810000001", expiresInDays: 30)).ok.body.json.synced)
        #expect(synced.status == "ok" && synced.owned && !synced.conflict)
        let status = try await server.app.getStoreKitSubscriptionStatus(query: .init(originalTransactionId: "2000000810000001")).ok.body.json
        #expect(status.status == 1 && status.autoRenewStatus == 1 && status.isActive)
        #expect(status.expiresAt == TestServer.start.addingTimeInterval(30 * 86_400))

        let created = try await sync(server, user: "cus_ava", transaction("2000000899999999")).ok.body.json
        #expect(created.owned)
        let sources = try await server.app.getEntitlements(query: .init(userId: "cus_ava")).ok.body.json.entitlements.map(\.source)
        #expect(sources == [.webCheckout, .storeKit])
        expectFailure(try await server.app.getStoreKitSubscriptionStatus(query: .init(originalTransactionId: "nope")),
                      status: 404, code: "unknown_transaction")
    }

    @Test func anotherUsersTransactionIsAConflict() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let conflict = try #require(try await sync(server, user: "cus_ben", transaction("2000000810000001")).ok.body.json.synced)
        #expect(conflict.status == "conflict" && !conflict.owned && conflict.conflict && conflict.claimAvailable)
        #expect(conflict.existingOwnerHint == "c***@example.com", "Chloé's address, masked")
        let ben = try await server.app.getEntitlements(query: .init(userId: "cus_ben")).ok.body.json.entitlements
        #expect(ben.count == 1 && ben[0].storekitOriginalTransactionId == "2000000810000002", "nothing moved to Ben")
    }

    @Test func rejectedSignedDataStoresNothing() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let stranger = try LocalStoreKitCA.make(name: "Stranger")
        let jws = try await stranger.sign(transaction("2000000877777777"))
        expectFailure(try await server.app.syncStoreKitTransaction(body: .json(.init(jwsRepresentation: jws, userId: "cus_ava"))),
                      status: 422, code: "jws_untrusted_root")
        expectFailure(try await server.app.syncStoreKitTransaction(body: .json(.init(jwsRepresentation: "not.a.jws", userId: "cus_ava"))),
                      status: 422, code: "jws_malformed")
        expectFailure(try await sync(server, user: "cus_ava", transaction("2000000877777777", product: "com.other.product")),
                      status: 422, code: "unknown_app_store_product")
        let ava = try await server.app.getEntitlements(query: .init(userId: "cus_ava")).ok.body.json.entitlements
        #expect(ava.count == 1)
        let foreign = try await stranger.sign(AppStoreNotification(
            notificationType: "REFUND", subtype: nil, notificationUUID: UUID().uuidString,
            data: .init(bundleId: "com.savedesk.reader", environment: "Sandbox", signedTransactionInfo: jws, signedRenewalInfo: nil, status: nil),
            signedDate: nil
        ))
        let forged = try await server.client(key: nil).receiveAppStoreNotification(body: .json(.init(signedPayload: foreign)))
        expectFailure(forged, status: 422, code: "jws_untrusted_root")
        // A transaction where a notification belongs is malformed.
        expectFailure(try await server.client(key: nil).receiveAppStoreNotification(body: .json(.init(signedPayload: jws))),
                      status: 422, code: "jws_malformed")
    }

    @Test func notificationsChangeStateOnceEach() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let graceEnds = Int64(TestServer.start.addingTimeInterval(16 * 86_400).timeIntervalSince1970 * 1000)
        let renewal = AppStoreRenewalInfo(
            originalTransactionId: "2000000810000001", productId: Self.premium, autoRenewStatus: 1, expirationIntent: nil,
            gracePeriodExpiresDate: graceEnds, isInBillingRetryPeriod: true, environment: "Sandbox", signedDate: nil
        )
        let uuid = UUID().uuidString
        #expect(try await notify(server, "DID_FAIL_TO_RENEW", subtype: "GRACE_PERIOD", otid: "2000000810000001", uuid: uuid, renewal: renewal) == "applied")
        let chloe = try await server.desk.getCustomer(path: .init(customerId: "cus_chloe")).ok.body.json.entitlements[0].lifecycle
        #expect(chloe.state.rawValue == "grace_period" && chloe.daysLeft == 16)
        let eventsBefore = try await server.desk.getCustomerTimeline(path: .init(customerId: "cus_chloe")).ok.body.json.events.count
        // A replay changes nothing.
        #expect(try await notify(server, "DID_FAIL_TO_RENEW", subtype: "GRACE_PERIOD", otid: "2000000810000001", uuid: uuid, renewal: renewal) == "duplicate")
        #expect(try await server.desk.getCustomerTimeline(path: .init(customerId: "cus_chloe")).ok.body.json.events.count == eventsBefore)

        #expect(try await notify(server, "GRACE_PERIOD_EXPIRED", otid: "2000000810000001") == "applied")
        #expect(try await server.desk.getCustomer(path: .init(customerId: "cus_chloe")).ok.body.json.entitlements[0].lifecycle.state.rawValue == "billing_retry")
        #expect(try await notify(server, "EXPIRED", subtype: "BILLING_RETRY", otid: "2000000810000001") == "applied")
        let expired = try await server.desk.getCustomer(path: .init(customerId: "cus_chloe")).ok.body.json.entitlements[0].lifecycle
        #expect(expired.state.rawValue == "expired" && expired.summary == "Expired (payment failed)" && expired.winBackEligible)

        // Mid-switch Hana turns Apple renewal off: the switch is complete.
        #expect(try await server.app.getUserOffer(query: .init(userId: "cus_hana")).ok.body.json.state == "accepted")
        #expect(try await notify(server, "DID_CHANGE_RENEWAL_STATUS", subtype: "AUTO_RENEW_DISABLED", otid: "2000000810000005") == "applied")
        #expect(try await server.app.getUserOffer(query: .init(userId: "cus_hana")).ok.body.json.state == "completed")

        #expect(try await notify(server, "REFUND", otid: "2000000810000002") == "applied")
        #expect(try await server.desk.getCustomer(path: .init(customerId: "cus_ben")).ok.body.json.entitlements[0].lifecycle.state.rawValue == "revoked")
        #expect(try await notify(server, "DID_RENEW", otid: "2000000800000000") == "unmatched")
        let event = try await server.desk.getCustomerTimeline(path: .init(customerId: "cus_ben")).ok.body.json.events[0]
        #expect(event.actor == "app_store" && event.action == "app_store.refund")
    }
}
