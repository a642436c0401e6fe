import Foundation
import TestSupport
import Testing

@testable import SaveDeskServer

/// SaveDesk's local StoreKit CA signs what Apple's own App Store Server Library accepts in its
/// strict X.509 mode. `make test` installs that library from PyPI into a throwaway venv and sets
/// SAVEDESK_TEST_PYTHON to its interpreter; without it (a bare `swift test`) the test is skipped
/// and says so.
@Suite("Interop with Apple's App Store Server Library")
struct AppleInteropTests {
    static let python = ProcessInfo.processInfo.environment["SAVEDESK_TEST_PYTHON"]
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("scripts/verify-with-apples-library.py")

    struct Verdict: Decodable {
        struct Transaction: Decodable { var original_transaction_id: String; var product_id: String; var bundle_id: String }
        struct Notification: Decodable { var type: String; var subtype: String?; var uuid: String }
        var transaction: Transaction?
        var transaction_error: String?
        var notification: Notification?
        var notification_error: String?
    }

    func verify(with ca: LocalStoreKitCA) async throws -> Verdict {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("apple-interop-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let transaction = AppStoreTransaction(
            transactionId: "2000000999000001", originalTransactionId: "2000000999000000", bundleId: "com.savedesk.reader",
            productId: "com.savedesk.reader.premium.monthly", purchaseDate: now, originalPurchaseDate: now, expiresDate: now + 86_400_000,
            environment: "Sandbox", type: "Auto-Renewable Subscription", revocationDate: nil, signedDate: now
        )
        let signedTransaction = try await ca.sign(transaction)
        let notification = AppStoreNotification(
            notificationType: "DID_CHANGE_RENEWAL_STATUS", subtype: "AUTO_RENEW_DISABLED", notificationUUID: UUID().uuidString.lowercased(),
            data: .init(bundleId: "com.savedesk.reader", environment: "Sandbox", signedTransactionInfo: signedTransaction,
                        signedRenewalInfo: nil, status: 1),
            signedDate: now
        )
        let files = (root: directory.appendingPathComponent("root.der"), transaction: directory.appendingPathComponent("transaction.jws"),
                     notification: directory.appendingPathComponent("notification.jws"), output: directory.appendingPathComponent("out.json"))
        try Data(try ca.root.serializeAsPEM().derBytes).write(to: files.root)
        try signedTransaction.write(to: files.transaction, atomically: true, encoding: .utf8)
        try await ca.sign(notification).write(to: files.notification, atomically: true, encoding: .utf8)
        FileManager.default.createFile(atPath: files.output.path, contents: nil)
        let process = try ChildProcess.spawn(
            try #require(Self.python), [Self.script.path, files.root.path, "com.savedesk.reader", files.transaction.path, files.notification.path],
            stdout: files.output.path
        )
        #expect(await process.wait(timeout: .seconds(30)) == 0)
        return try JSONDecoder().decode(Verdict.self, from: Data(contentsOf: files.output))
    }

    @Test(.enabled(if: python != nil, "make test installs Apple's library and sets SAVEDESK_TEST_PYTHON"))
    func applesLibraryVerifiesWhatSaveDeskSigns() async throws {
        let verdict = try await verify(with: try LocalStoreKitCA.make())
        #expect(verdict.transaction_error == nil && verdict.notification_error == nil, "\(String(describing: verdict))")
        #expect(verdict.transaction?.original_transaction_id == "2000000999000000")
        #expect(verdict.transaction?.bundle_id == "com.savedesk.reader")
        #expect(verdict.notification?.type == "DID_CHANGE_RENEWAL_STATUS" && verdict.notification?.subtype == "AUTO_RENEW_DISABLED")
        // Without subject and authority key identifiers (the CA as it was), Apple's library refuses.
        let old = try await verify(with: try LocalStoreKitCA.make(keyIdentifiers: false))
        #expect(old.transaction_error != nil && old.notification_error != nil)
    }
}
