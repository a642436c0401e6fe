import Foundation
import Testing

@testable import SaveDeskServer

/// Every response of every call the seed's iOS SDK makes, taken from a running server for the demo
/// customers in every lifecycle state, decodes with the SDK's own shapes (`SDK.*`).
@Suite("SDK contract")
struct SDKContractTests {
    static let premium = "com.savedesk.reader.premium.monthly"

    func customers(_ app: SDKApp) async throws -> [String] {
        struct Page: Decodable { struct Customer: Decodable { var id: String }; var customers: [Customer] }
        let reply = try await app.call(.GET, "/v1/desk/customers?per_page=100", key: SDKApp.operatorKey)
        return try JSONDecoder().decode(Page.self, from: reply.body).customers.map(\.id)
    }

    func signed(_ app: SDKApp, otid: String, signedDate: Int64, days: Double = 30) async throws -> String {
        let ca = try LocalStoreKitCA.loadOrCreate(in: app.directory)
        let now = Int64(SDKApp.start.timeIntervalSince1970 * 1000)
        return try await ca.sign(AppStoreTransaction(
            transactionId: "tx_\(UUID().uuidString.prefix(8))", originalTransactionId: otid, bundleId: "com.savedesk.reader",
            productId: Self.premium, purchaseDate: now, originalPurchaseDate: now - 100 * 86_400_000,
            expiresDate: now + Int64(days * 86_400_000), environment: "Sandbox", type: "Auto-Renewable Subscription",
            revocationDate: nil, signedDate: signedDate
        ))
    }

    @Test func everyReadDecodesForEveryDemoCustomer() async throws {
        let app = try await SDKApp.start()
        defer { Task { await app.stop() } }
        let catalog = try await app.decoded(SDK.ProductsResponse.self, .GET, "/v1/iap/products/")
        #expect(catalog.products.count == 3 && catalog.products.allSatisfy { $0.subscriptionGroupId == 21482973 })
        #expect(catalog.config?.offer?.flowType == .migration && catalog.config?.checkout.isEnabled == true)
        let demo = try await app.decoded(SDK.ProductsResponse.self, .GET, "/v1/iap/products/?demo=migration")
        #expect(demo.config?.offer?.rolloutPercent == 100 && demo.config?.offer?.minSubscriptionDays == 0)
        let upgrade = try await app.decoded(SDK.ProductsResponse.self, .GET, "/v1/iap/products/?demo=upgrade")
        #expect(upgrade.config?.offer?.flowType == .upgrade && upgrade.config?.offer?.upgradeType == .storekitToWeb)
        let config = try await app.decoded(SDK.CancelFlowConfig.self, .GET, "/v1/iap/cancel-flow/")
        #expect(config.enabled && config.variantId == 202611)
        var seenTypes = Set<String>(), seenActions = Set<SDK.ActionType>()
        for id in try await customers(app) {
            _ = try await app.decoded(SDK.ProductsResponse.self, .GET, "/v1/iap/products/?user_id=\(id)")
            _ = try await app.decoded(SDK.CancelFlowConfig.self, .GET, "/v1/iap/cancel-flow/?user_id=\(id)")
            let offer = try await app.decoded(SDK.UserOfferResponse.self, .GET, "/v1/iap/user-offer/?user_id=\(id)")
            seenTypes.insert(offer.subscription.type)
            seenActions.insert(offer.offer.actionType)
            if offer.subscription.type != "none" { #expect(offer.subscription.productId != nil, "\(id)") }
            let entitlements = try await app.decoded(SDK.EntitlementsResponse.self, .GET, "/v1/iap/entitlements/?user_id=\(id)")
            _ = try await app.decoded(SDK.TransactionHistory.self, .GET, "/v1/iap/transaction-history/?user_id=\(id)")
            for entitlement in entitlements.entitlements {
                _ = try await app.decoded(SDK.UpgradeOfferConfig.self, .GET,
                                          "/v1/iap/upgrade-offer/?user_id=\(id)&product_id=\(entitlement.productId)")
                if let otid = entitlement.storekitOriginalTransactionId {
                    let status = try await app.decoded(SDK.StoreKitStatusResponse.self, .GET,
                                                       "/v1/iap/storekit-subscription-status/?original_transaction_id=\(otid)")
                    #expect(status.autoRenewEnabled != nil)
                }
            }
        }
        #expect(seenTypes.isSuperset(of: ["active_web", "active_storekit", "migration_trial", "cancelled_active", "none"]), "\(seenTypes)")
        #expect(seenActions == [.migrateStorekitToWeb])
    }

    @Test func everyCheckoutCallDecodes() async throws {
        let app = try await SDKApp.start()
        defer { Task { await app.stop() } }
        // The SDK's ordinary purchase: the original transaction id, no end date.
        let switching = try await app.decoded(SDK.CheckoutResponse.self, .POST, "/v1/iap/checkout-configs/", body: """
            {"product_id":"premium_monthly","user_id":"cus_chloe","storekit_original_transaction_id":"2000000810000001",\
            "platform":"ios","ios_version":"26.4.1","storefront":"USA","customer_email":"chloe.martin@example.com"}
            """)
        #expect(switching.deferredMode == true && switching.clientSecret == nil && URL(string: switching.checkoutUrl)?.scheme != nil)
        let plain = try await app.decoded(SDK.CheckoutResponse.self, .POST, "/v1/iap/checkout-configs/",
                                          body: #"{"product_id":"premium_yearly","user_id":"cus_ava","platform":"ios"}"#)
        let batch = try await app.decoded(SDK.BatchCheckoutResponse.self, .POST, "/v1/iap/checkout-configs/batch/", body: """
            {"products":[{"product_id":"basic_monthly"},{"product_id":"gold"}],"user_id":"cus_george","platform":"ios"}
            """)
        #expect(batch.results.count == 2 && batch.results[0].error == nil && batch.results[0].callbackUrl != nil && batch.results[1].error != nil)
        let sheet = try await app.decoded(SDK.CheckoutConfig.self, .GET, "/v1/iap/checkout-config/\(plain.transactionId)/")
        #expect(!sheet.hasTrial && sheet.originalAmountCents == 5999)
        let first = try await app.decoded(SDK.FinalizeResponse.self, .POST, "/v1/iap/payment-intents/\(plain.transactionId)/finalize/")
        let again = try await app.decoded(SDK.FinalizeResponse.self, .POST, "/v1/iap/payment-intents/\(plain.transactionId)/finalize/")
        #expect(first.clientSecret == again.clientSecret)
        let session = try await app.decoded(SDK.CheckoutSession.self, .POST, "/v1/iap/checkout-sessions/",
                                            body: #"{"product_id":"premium_monthly","user_id":"cus_ben","platform":"ios"}"#)
        #expect(URL(string: session.checkoutUrl)?.host != nil)
        let pending = try await app.decoded(SDK.CheckoutTransaction.self, .GET, "/v1/iap/transactions/\(switching.transactionId)/")
        #expect(pending.status == "pending")
        let paid = try await app.call(.POST, "/v1/desk/simulate/checkout",
                                      body: #"{"transaction_id":"\#(switching.transactionId)","outcome":"paid"}"#, key: SDKApp.operatorKey)
        #expect(paid.status == 200)
        let completed = try await app.decoded(SDK.CheckoutTransaction.self, .GET, "/v1/iap/transactions/\(switching.transactionId)/")
        #expect(completed.status == "completed" && completed.source == .webCheckout)
        let patched = try await app.call(.PATCH, "/v1/iap/transactions/\(switching.transactionId)/storekit-status/",
                                         body: #"{"storekit_status":4,"storekit_subscription_end":"2026-12-01T12:00:00Z"}"#)
        #expect((200..<300).contains(patched.status))
        let history = try await app.decoded(SDK.TransactionHistory.self, .GET, "/v1/iap/transaction-history/?user_id=cus_chloe")
        #expect(history.transactions.map(\.source) == [.webCheckout, .storeKit], "newest first")
    }

    @Test func everyStoreKitAndCancelFlowCallDecodes() async throws {
        let app = try await SDKApp.start()
        defer { Task { await app.stop() } }
        let one = try await signed(app, otid: "2000000810000001", signedDate: Int64(SDKApp.start.timeIntervalSince1970 * 1000) + 1)
        let synced = try await app.decoded(SDK.SyncResponse.self, .POST, "/v1/iap/storekit-transactions/",
                                           body: #"{"jws_representation":"\#(one)","user_id":"cus_chloe"}"#)
        #expect(synced.owned == true && synced.originalTransactionId == "2000000810000001")
        let conflict = try await app.decoded(SDK.SyncResponse.self, .POST, "/v1/iap/storekit-transactions/",
                                             body: #"{"jws_representation":"\#(one)","user_id":"cus_ben"}"#)
        #expect(conflict.conflict == true && conflict.claimAvailable == true && conflict.existingOwnerHint == "c***@example.com")
        let chunk = #"{"transactions":[{"signed_transaction":"\#(one)"},{"signed_transaction":"not.a.jws"}],"user_id":"cus_chloe","client_request_id":"r-1of1","client_sdk_version":"1.5.0"}"#
        let reconciled = try await app.decoded(SDK.ReconcileResponse.self, .POST, "/v1/iap/storekit-transactions/", body: chunk)
        #expect(reconciled.processed == 1 && reconciled.eventsEmitted == 0 && reconciled.skipped?.count == 1)
        let empty = try await app.decoded(SDK.ReconcileResponse.self, .POST, "/v1/iap/storekit-transactions/",
                                          body: #"{"transactions":[],"user_id":"cus_chloe","client_request_id":"r-0","client_sdk_version":"1.5.0"}"#)
        #expect(empty.processed == 0)
        let claimed = try await app.decoded(SDK.ClaimResponse.self, .POST, "/v1/iap/claim-entitlement/",
                                            body: #"{"jws_representation":"\#(one)","user_id":"cus_ben"}"#)
        #expect(claimed.claimed == true && claimed.originalTransactionId == "2000000810000001")
        for (path, body) in [
            ("/v1/iap/offer-viewed/", #"{"user_id":"cus_ben","product_id":"premium_monthly","session_id":"5f0c6e1e-0b6e-4c1a-9e8f-2d7f4a2b9c10","variant_id":3,"flow_type":"migration"}"#),
            ("/v1/iap/migration-converted/", #"{"user_id":"cus_ben"}"#),
            ("/v1/iap/events/", #"{"event_type":"paywall_viewed","user_id":"anonymous","product_id":"premium_monthly","screen_name":"onboarding","metadata":{"placement":"home"}}"#),
            ("/v1/iap/cancel-flow/respond/", #"{"user_id":"cus_ava","product_id":"premium_monthly","outcome":"retained","offer_shown":true,"offer_accepted":true,"pause_shown":false,"pause_accepted":false,"last_step_seen":0,"answers":[{"question_id":1,"selected_option_id":11}],"variant_id":202611}"#),
            ("/v1/iap/upgrade-offer/respond/", #"{"user_id":"cus_farah","current_product_id":"basic_monthly","target_product_id":"premium_monthly","outcome":"declined","variant_id":1}"#),
        ] {
            let reply = try await app.call(.POST, path, body: body)
            #expect((200..<300).contains(reply.status), "\(path): \(reply.text)")
        }
        let accepted = try await app.decoded(SDK.AcceptOfferResponse.self, .POST, "/v1/iap/cancel-flow/accept-offer/",
                                             body: #"{"product_id":"premium_monthly","user_id":"cus_ava"}"#)
        #expect(accepted.discountPercent == 40 && accepted.durationMonths == 3)
        // A fixed-date option sends no duration: the config's default option is used.
        let paused = try await app.decoded(SDK.PauseResponse.self, .POST, "/v1/iap/subscriptions/pause/",
                                           body: #"{"product_id":"premium_monthly","user_id":"cus_george"}"#)
        #expect(paused.resumesAt != nil)
        let pausedAgain = try await app.decoded(SDK.PauseResponse.self, .POST, "/v1/iap/subscriptions/pause/",
                                                body: #"{"product_id":"premium_monthly","user_id":"cus_george"}"#)
        #expect(pausedAgain.resumesAt == paused.resumesAt, "no Idempotency-Key from the SDK: the second pause answers as the first")
        for (path, body) in [
            ("/v1/iap/subscriptions/resume/", #"{"product_id":"premium_monthly","user_id":"cus_george"}"#),
            ("/v1/iap/subscriptions/cancel/", #"{"product_id":"premium_monthly","user_id":"cus_ava","immediate":false}"#),
        ] {
            let reply = try await app.call(.POST, path, body: body)
            #expect((200..<300).contains(reply.status), "\(path): \(reply.text)")
        }
        let upgraded = try await app.decoded(SDK.UpgradeExecuteResponse.self, .POST, "/v1/iap/upgrade-offer/execute/",
                                             body: #"{"user_id":"cus_farah","current_product_id":"basic_monthly","target_product_id":"premium_monthly"}"#)
        #expect(upgraded.success)
    }

    /// An app's new user, whom nobody created: the SDK's first launch (products, entitlements,
    /// user-offer, the cancel-flow config, history) answers as for a customer with nothing and
    /// stores nothing; a StoreKit purchase synced makes the customer; a web checkout paid, then a
    /// cancel flow and a cancellation, all decode with the SDK's shapes.
    @Test func aUserNobodyCreatedGoesThroughTheSDKsFirstLaunchAndBuys() async throws {
        let app = try await SDKApp.start()
        defer { Task { await app.stop() } }
        // An app's own user id: an uppercase UUID (ids are case-sensitive; this one is new).
        let user = "8D2F1C4E-6B0A-4E55-9A1D-3C7B2E9F0A11"
        func exists() async throws -> Bool {
            try await app.call(.GET, "/v1/desk/customers/\(user)", key: SDKApp.operatorKey).status == 200
        }
        let products = try await app.decoded(SDK.ProductsResponse.self, .GET, "/v1/iap/products/?user_id=\(user)")
        #expect(products.products.count == 3 && products.config?.offer == nil, "nothing to switch from")
        let entitlements = try await app.decoded(SDK.EntitlementsResponse.self, .GET, "/v1/iap/entitlements/?user_id=\(user)")
        #expect(entitlements.entitlements.isEmpty)
        let offer = try await app.decoded(SDK.UserOfferResponse.self, .GET, "/v1/iap/user-offer/?user_id=\(user)")
        #expect(offer.subscription.type == "none" && !offer.offer.isEligible)
        _ = try await app.decoded(SDK.CancelFlowConfig.self, .GET, "/v1/iap/cancel-flow/?user_id=\(user)")
        let history = try await app.decoded(SDK.TransactionHistory.self, .GET, "/v1/iap/transaction-history/?user_id=\(user)")
        #expect(history.transactions.isEmpty)
        _ = try await app.decoded(SDK.UpgradeOfferConfig.self, .GET, "/v1/iap/upgrade-offer/?user_id=\(user)&product_id=premium_monthly")
        #expect(try await !exists(), "reads store nothing")
        // Its lowercase twin is another user, also new.
        #expect(try await app.decoded(SDK.EntitlementsResponse.self, .GET, "/v1/iap/entitlements/?user_id=\(user.lowercased())").entitlements.isEmpty)

        // A StoreKit purchase on the device, synced: the customer is made with it.
        let jws = try await signed(app, otid: "2000000777000001", signedDate: Int64(SDKApp.start.timeIntervalSince1970 * 1000) + 1)
        let synced = try await app.decoded(SDK.SyncResponse.self, .POST, "/v1/iap/storekit-transactions/",
                                           body: #"{"jws_representation":"\#(jws)","user_id":"\#(user)"}"#)
        #expect(synced.owned == true)
        #expect(try await exists())
        let afterSync = try await app.decoded(SDK.EntitlementsResponse.self, .GET, "/v1/iap/entitlements/?user_id=\(user)")
        #expect(afterSync.entitlements.map(\.productId) == ["premium_monthly"] && afterSync.entitlements[0].source == .storeKit)

        // A web checkout of another product, paid.
        let checkout = try await app.decoded(SDK.CheckoutResponse.self, .POST, "/v1/iap/checkout-configs/",
                                             body: #"{"product_id":"premium_yearly","user_id":"\#(user)","platform":"ios"}"#)
        let paid = try await app.call(.POST, "/v1/desk/simulate/checkout",
                                      body: #"{"transaction_id":"\#(checkout.transactionId)","outcome":"paid"}"#, key: SDKApp.operatorKey)
        #expect(paid.status == 200, "\(paid.text)")
        let transaction = try await app.decoded(SDK.CheckoutTransaction.self, .GET, "/v1/iap/transactions/\(checkout.transactionId)/")
        #expect(transaction.status == "completed")
        let both = try await app.decoded(SDK.EntitlementsResponse.self, .GET, "/v1/iap/entitlements/?user_id=\(user)")
        #expect(Set(both.entitlements.map(\.productId)) == ["premium_monthly", "premium_yearly"])
        // A second checkout of the product it has on the web: refused (one web subscription per product).
        let again = try await app.call(.POST, "/v1/iap/checkout-configs/", body: #"{"product_id":"premium_yearly","user_id":"\#(user)","platform":"ios"}"#)
        #expect(again.status == 409 && again.text.contains("already_subscribed"), "\(again.text)")

        // The cancel flow: config, a response, the cancellation of the web subscription.
        _ = try await app.decoded(SDK.CancelFlowConfig.self, .GET, "/v1/iap/cancel-flow/?user_id=\(user)")
        for (path, body) in [
            ("/v1/iap/cancel-flow/respond/", #"{"user_id":"\#(user)","product_id":"premium_yearly","outcome":"cancelled","offer_shown":true,"offer_accepted":false,"pause_shown":true,"pause_accepted":false,"last_step_seen":3,"answers":[{"question_id":1,"selected_option_id":11}]}"#),
            ("/v1/iap/subscriptions/cancel/", #"{"product_id":"premium_yearly","user_id":"\#(user)","immediate":false}"#),
        ] {
            let reply = try await app.call(.POST, path, body: body)
            #expect((200..<300).contains(reply.status), "\(path): \(reply.text)")
        }
        let cancelled = try await app.decoded(SDK.EntitlementsResponse.self, .GET, "/v1/iap/entitlements/?user_id=\(user)")
        #expect(cancelled.entitlements.first { $0.productId == "premium_yearly" }?.willRenew == false)
        _ = try await app.decoded(SDK.TransactionHistory.self, .GET, "/v1/iap/transaction-history/?user_id=\(user)")
        _ = try await app.decoded(SDK.UserOfferResponse.self, .GET, "/v1/iap/user-offer/?user_id=\(user)")
    }
}
