import Foundation
import RetentionDomain
import SaveDeskAPI
import Testing
import X509

@testable import SaveDeskServer

/// App Store state moves only on verified signed data newer than what was applied, and the
/// verifier refuses what Apple's own library refuses.
@Suite("Money on verified facts")
struct VerifiedFactsTests {
    static let premium = "com.savedesk.reader.premium.monthly"
    static let chloe = "2000000810000001"

    func transaction(_ otid: String, signedDate: Int64, revoked: Bool = false, bundleId: String? = "com.savedesk.reader",
                     environment: String? = "Sandbox") -> AppStoreTransaction {
        let now = Int64(TestServer.start.timeIntervalSince1970 * 1000)
        return AppStoreTransaction(
            transactionId: "tx_\(UUID().uuidString.prefix(8))", originalTransactionId: otid, bundleId: bundleId,
            productId: Self.premium, purchaseDate: now, originalPurchaseDate: now - 200 * 86_400_000, expiresDate: now + 30 * 86_400_000,
            environment: environment, type: "Auto-Renewable Subscription", revocationDate: revoked ? now : nil, signedDate: signedDate
        )
    }

    func notification(_ type: String, subtype: String? = nil, otid: String, signedDate: Int64, ca: LocalStoreKitCA,
                      renewal: AppStoreRenewalInfo? = nil) async throws -> String {
        try await ca.sign(AppStoreNotification(
            notificationType: type, subtype: subtype, notificationUUID: UUID().uuidString,
            data: .init(bundleId: "com.savedesk.reader", environment: "Sandbox",
                        signedTransactionInfo: try await ca.sign(transaction(otid, signedDate: signedDate)),
                        signedRenewalInfo: try await renewal.asyncMap { try await ca.sign($0) }, status: nil),
            signedDate: signedDate
        ))
    }

    func state(_ server: TestServer, _ customer: String) async throws -> Components.Schemas.DeskEntitlement {
        try await server.desk.getCustomer(path: .init(customerId: customer)).ok.body.json.entitlements[0]
    }

    @Test func olderSignedDataNeverUndoesNewer() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let ca = try LocalStoreKitCA.loadOrCreate(in: server.directory)
        let t1 = SignedDates.next(), t2 = SignedDates.next(), t3 = SignedDates.next(), t4 = SignedDates.next()
        let old = try await ca.sign(transaction(Self.chloe, signedDate: t1))
        #expect(try await server.app.syncStoreKitTransaction(body: .json(.init(jwsRepresentation: old, userId: "cus_chloe"))).ok.body.json.owned)
        // Apple refunds it.
        let refund = try await notification("REFUND", otid: Self.chloe, signedDate: t2, ca: ca)
        #expect(try await server.client(key: nil).receiveAppStoreNotification(body: .json(.init(signedPayload: refund))).ok.body.json.status == "applied")
        #expect(try await state(server, "cus_chloe").lifecycle.state.rawValue == "revoked")
        // Re-syncing the old signed transaction answers as before and revives nothing.
        let resync = try await server.app.syncStoreKitTransaction(body: .json(.init(jwsRepresentation: old, userId: "cus_chloe", willAutoRenew: true)))
        #expect(try resync.ok.body.json.owned)
        let after = try await state(server, "cus_chloe")
        #expect(after.lifecycle.state.rawValue == "revoked" && !after.entitlement.isActive && !after.entitlement.willRenew)

        // Ben expires; a DID_RENEW signed before the expiry arrives late and changes nothing.
        let expire = try await notification("EXPIRED", subtype: "VOLUNTARY", otid: "2000000810000002", signedDate: t4, ca: ca)
        #expect(try await server.client(key: nil).receiveAppStoreNotification(body: .json(.init(signedPayload: expire))).ok.body.json.status == "applied")
        let late = try await notification("DID_RENEW", otid: "2000000810000002", signedDate: t3, ca: ca)
        #expect(try await server.client(key: nil).receiveAppStoreNotification(body: .json(.init(signedPayload: late))).ok.body.json.status == "stale")
        #expect(try await state(server, "cus_ben").lifecycle.state.rawValue == "expired")
    }

    /// Two notifications can be signed in one millisecond: what differs is applied, the same again
    /// changes nothing, and a tie never undoes a refund.
    @Test func dataSignedInTheSameMillisecondIsAppliedWhenItDiffersAndNeverLosesARefund() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let ca = try LocalStoreKitCA.loadOrCreate(in: server.directory)
        func receive(_ payload: String) async throws -> String {
            try await server.client(key: nil).receiveAppStoreNotification(body: .json(.init(signedPayload: payload))).ok.body.json.status
        }
        let tie = SignedDates.next()
        let synced = try await ca.sign(transaction(Self.chloe, signedDate: tie))
        #expect(try await server.app.syncStoreKitTransaction(body: .json(.init(jwsRepresentation: synced, userId: "cus_chloe"))).ok.body.json.owned)
        // A refund signed in the millisecond of the synced transaction: applied, not "stale".
        #expect(try await receive(try await notification("REFUND", otid: Self.chloe, signedDate: tie, ca: ca)) == "applied")
        #expect(try await state(server, "cus_chloe").lifecycle.state.rawValue == "revoked")
        // A renewal of the same millisecond would undo it: kept out.
        #expect(try await receive(try await notification("DID_RENEW", otid: Self.chloe, signedDate: tie, ca: ca)) == "stale")
        // The same refund again (another notification): nothing to change.
        #expect(try await receive(try await notification("REFUND", otid: Self.chloe, signedDate: tie, ca: ca)) == "unchanged")
        #expect(try await state(server, "cus_chloe").lifecycle.state.rawValue == "revoked")
        // The synced transaction again, at the tie: it would revive the subscription, so it does not.
        _ = try await server.app.syncStoreKitTransaction(body: .json(.init(jwsRepresentation: synced, userId: "cus_chloe"))).ok
        #expect(try await state(server, "cus_chloe").lifecycle.state.rawValue == "revoked")

        // Ben: a renewal-off signed in the millisecond of an applied renewal is applied.
        let ben = "2000000810000002", benTie = SignedDates.next()
        #expect(try await receive(try await notification("DID_RENEW", otid: ben, signedDate: benTie, ca: ca)) == "applied")
        let off = AppStoreRenewalInfo(originalTransactionId: ben, productId: Self.premium, autoRenewStatus: 0, expirationIntent: nil,
                                      gracePeriodExpiresDate: nil, isInBillingRetryPeriod: nil, environment: "Sandbox", signedDate: benTie)
        #expect(try await receive(try await notification("DID_CHANGE_RENEWAL_STATUS", subtype: "AUTO_RENEW_DISABLED", otid: ben,
                                                         signedDate: benTie, ca: ca, renewal: off)) == "applied")
        #expect(try await state(server, "cus_ben").entitlement.willRenew == false)
    }

    @Test func theOrderingRule() {
        typealias Ordering = AppStore.Ordering
        #expect(Ordering.decide(signed: 5, applied: nil, changes: false, undoesRevocation: false) == .apply)
        #expect(Ordering.decide(signed: 6, applied: 5, changes: false, undoesRevocation: true) == .apply)
        #expect(Ordering.decide(signed: 4, applied: 5, changes: true, undoesRevocation: false) == .stale)
        #expect(Ordering.decide(signed: 5, applied: 5, changes: true, undoesRevocation: false) == .apply)
        #expect(Ordering.decide(signed: 5, applied: 5, changes: false, undoesRevocation: false) == .same)
        #expect(Ordering.decide(signed: 5, applied: 5, changes: true, undoesRevocation: true) == .stale)
        #expect(Ordering.decide(signed: nil, applied: 0, changes: true, undoesRevocation: false) == .apply)
    }

    @Test func aDevicesWordNeverOutranksSignedRenewalInfo() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let ca = try LocalStoreKitCA.loadOrCreate(in: server.directory)
        let renewal = AppStoreRenewalInfo(
            originalTransactionId: Self.chloe, productId: Self.premium, autoRenewStatus: 0, expirationIntent: nil,
            gracePeriodExpiresDate: nil, isInBillingRetryPeriod: nil, environment: "Sandbox", signedDate: SignedDates.next()
        )
        let off = try await notification("DID_CHANGE_RENEWAL_STATUS", subtype: "AUTO_RENEW_DISABLED", otid: Self.chloe,
                                         signedDate: SignedDates.next(), ca: ca, renewal: renewal)
        _ = try await server.client(key: nil).receiveAppStoreNotification(body: .json(.init(signedPayload: off))).ok
        // A newer transaction synced with the device saying "renewing": the signed renewal info stands.
        let newer = try await ca.sign(transaction(Self.chloe, signedDate: SignedDates.next()))
        _ = try await server.app.syncStoreKitTransaction(body: .json(.init(jwsRepresentation: newer, userId: "cus_chloe", willAutoRenew: true))).ok
        #expect(try await state(server, "cus_chloe").entitlement.willRenew == false)
        let status = try await server.app.getStoreKitSubscriptionStatus(query: .init(originalTransactionId: Self.chloe)).ok.body.json
        #expect(status.autoRenewStatus == 0)
    }

    @Test func theVerifierRefusesWhatApplesLibraryRefuses() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let ca = try LocalStoreKitCA.loadOrCreate(in: server.directory)
        func sync(_ jws: String) async throws -> Operations.SyncStoreKitTransaction.Output {
            try await server.app.syncStoreKitTransaction(body: .json(.init(jwsRepresentation: jws, userId: "cus_chloe")))
        }
        // Two certificates (leaf and intermediate, the root left out).
        let short = try await ca.sign(transaction(Self.chloe, signedDate: SignedDates.next()), chain: [ca.leaf, ca.intermediate])
        expectFailure(try await sync(short), status: 422, code: "jws_malformed")
        // Four (the root repeated).
        let long = try await ca.sign(transaction(Self.chloe, signedDate: SignedDates.next()), chain: [ca.leaf, ca.intermediate, ca.root, ca.root])
        expectFailure(try await sync(long), status: 422, code: "jws_malformed")
        // The chain listed out of order.
        let swapped = try await ca.sign(transaction(Self.chloe, signedDate: SignedDates.next()), chain: [ca.intermediate, ca.leaf, ca.root])
        expectFailure(try await sync(swapped), status: 422, code: "jws_untrusted_root")
        // No bundle id, no environment: mismatches, not passes.
        let noBundle = try await ca.sign(transaction(Self.chloe, signedDate: SignedDates.next(), bundleId: nil))
        expectFailure(try await sync(noBundle), status: 422, code: "jws_wrong_bundle")
        let noEnvironment = try await ca.sign(transaction(Self.chloe, signedDate: SignedDates.next(), environment: nil))
        expectFailure(try await sync(noEnvironment), status: 422, code: "jws_wrong_environment")
        // The local CA carries the identifiers strict X.509 needs.
        for certificate in [ca.root, ca.intermediate, ca.leaf] {
            #expect(try certificate.extensions.subjectKeyIdentifier != nil)
        }
        #expect(try ca.intermediate.extensions.authorityKeyIdentifier?.keyIdentifier == ca.root.extensions.subjectKeyIdentifier?.keyIdentifier)
        #expect(try ca.leaf.extensions.authorityKeyIdentifier?.keyIdentifier == ca.intermediate.extensions.subjectKeyIdentifier?.keyIdentifier)
        // Its key file is the server user's alone.
        let attributes = try FileManager.default.attributesOfItem(atPath: server.directory.appendingPathComponent("storekit-leaf-key.pem").path)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
    }
}
