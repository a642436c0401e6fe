import Foundation
import SQLKit
import SaveDeskAPI
import Testing

@testable import SaveDeskServer

@Suite("Upgrade offers")
struct UpgradeTests {
    @Test func webToWebTakesEffectNowAndCreditsTheUnusedTime() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let offer = try await server.app.getUpgradeOffer(query: .init(userId: "cus_farah", productId: "basic_monthly")).ok.body.json
        #expect(offer.available && offer.upgradeType == .webToWeb)
        #expect(offer.targetProduct?.referenceId == "premium_monthly" && offer.targetProduct?.priceCents == 799)
        // Farah's period runs Oct 30 → Nov 30 (31 days) with 8 left: $3.99 × 8/31 = $1.03 credited.
        #expect(offer.proration?.amountCents == -103)
        #expect(offer.proration?.nextBillingDate == Calendar.utc.date(byAdding: .month, value: 1, to: TestServer.start))
        #expect(offer.display?.title == "Upgrade to Premium Monthly")

        let done = try await server.app.executeUpgrade(body: .json(.init(userId: "cus_farah", currentProductId: "basic_monthly", targetProductId: "premium_monthly"))).ok.body.json
        #expect(done.success && done.upgradeType == "web_to_web" && done.checkoutUrl == nil)
        let entitlement = try await server.app.getEntitlements(query: .init(userId: "cus_farah")).ok.body.json.entitlements[0]
        #expect(entitlement.productId == "premium_monthly" && entitlement.willRenew, "upgrading undoes the pending cancellation")
        _ = try await server.desk.advanceClock(body: .json(.init(days: 31))).ok
        let charges = try await server.withStore { store in
            try await store.exclusive { db in
                try await db.select().column("amount_micros").from("charges").where("subscription_id", .equal, "sub_farah_1")
                    .orderBy("at").all().map { try $0.decode(column: "amount_micros", as: Int64.self) }
            }
        }
        #expect(charges == [7_990_000, 6_960_000], "full new price now; the credit comes off the next renewal")
    }

    @Test func fromTheAppStoreTheUpgradeIsAWebCheckout() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let ca = try LocalStoreKitCA.loadOrCreate(in: server.directory)
        let now = Int64(TestServer.start.timeIntervalSince1970 * 1000)
        let basic = AppStoreTransaction(
            transactionId: "t1", originalTransactionId: "2000000866666666", bundleId: "com.savedesk.reader",
            productId: "com.savedesk.reader.basic.monthly", purchaseDate: now, originalPurchaseDate: now,
            expiresDate: now + 20 * 86_400_000, environment: "Sandbox", type: nil, revocationDate: nil, signedDate: now
        )
        // A reader the server has not seen: the StoreKit sync makes the customer.
        _ = try await server.app.syncStoreKitTransaction(body: .json(.init(jwsRepresentation: try await ca.sign(basic), userId: "cus_reader_42"))).ok
        let offer = try await server.app.getUpgradeOffer(query: .init(userId: "cus_reader_42", productId: "basic_monthly")).ok.body.json
        #expect(offer.available && offer.upgradeType == .storekitToWeb && offer.savingsPercent == 20, "$7.99 on the web vs $9.99")
        let started = try await server.app.executeUpgrade(body: .json(.init(userId: "cus_reader_42", currentProductId: "basic_monthly", targetProductId: "premium_monthly"))).ok.body.json
        #expect(started.upgradeType == "storekit_to_web")
        let transaction = try #require(started.transactionId)
        #expect(started.checkoutUrl?.hasSuffix("/checkout/\(transaction)") == true)
        #expect(try await server.app.getTransaction(path: .init(transactionId: transaction)).ok.body.json.status.rawValue == "pending")
    }

    @Test func unavailableOffersSayWhyAndAnswersAreRecorded() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let top = try await server.app.getUpgradeOffer(query: .init(userId: "cus_ava", productId: "premium_monthly")).ok.body.json
        #expect(!top.available && top.reason == "already_highest_tier" && top.reasonMessage == "Premium Monthly is already the highest tier")
        let paused = try await server.app.getUpgradeOffer(query: .init(userId: "cus_emma", productId: "premium_yearly")).ok.body.json
        #expect(!paused.available && paused.reason == "paused" && paused.reasonMessage?.contains("resume it") == true)
        let nobody = try await server.app.getUpgradeOffer(query: .init(userId: "cus_nobody", productId: "basic_monthly")).ok.body.json
        #expect(!nobody.available && nobody.reason == "no_active_subscription", "a new user has nothing to upgrade")
        expectFailure(try await server.app.executeUpgrade(body: .json(.init(userId: "cus_ava", currentProductId: "premium_monthly", targetProductId: "basic_monthly"))),
                      status: 422, code: "already_highest_tier")
        let answered = try await server.app.respondToUpgradeOffer(body: .json(.init(userId: "cus_farah", currentProductId: "basic_monthly", targetProductId: "premium_monthly", outcome: .declined)))
        #expect(try answered.ok.body.json.status == "recorded")
        #expect(try await server.desk.getCustomerTimeline(path: .init(customerId: "cus_farah")).ok.body.json.events[0].action == "upgrade_offer.declined")
    }
}
