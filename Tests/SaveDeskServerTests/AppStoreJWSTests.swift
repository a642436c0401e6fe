import Foundation
import JWTKit
import Testing

@testable import SaveDeskServer

@Suite("App Store JWS verification")
struct AppStoreJWSTests {
    static let now = TestServer.start

    static func transaction(bundle: String = "com.savedesk.reader", environment: String = "Sandbox") -> AppStoreTransaction {
        AppStoreTransaction(
            transactionId: "2000000900000001", originalTransactionId: "2000000810000001", bundleId: bundle,
            productId: "premium_monthly", purchaseDate: 1_795_000_000_000, originalPurchaseDate: 1_780_000_000_000,
            expiresDate: 1_796_000_000_000, environment: environment, type: "Auto-Renewable Subscription",
            revocationDate: nil, signedDate: 1_795_000_000_000
        )
    }

    func verifier(trusting ca: LocalStoreKitCA) -> AppStoreVerifier {
        AppStoreVerifier(roots: [ca.root], bundleId: "com.savedesk.reader", environment: "Sandbox")
    }

    func rejection(_ token: String, _ verifier: AppStoreVerifier) async -> String? {
        do {
            _ = try await verifier.verify(token, as: AppStoreTransaction.self, now: Self.now)
            return nil
        } catch {
            return error.code
        }
    }

    @Test func aTokenFromTheTrustedChainVerifies() async throws {
        let ca = try LocalStoreKitCA.make()
        let token = try await ca.sign(Self.transaction())
        let payload = try await verifier(trusting: ca).verify(token, as: AppStoreTransaction.self, now: Self.now)
        #expect(payload == Self.transaction())
    }

    @Test func eachFailureHasItsOwnCode() async throws {
        let ca = try LocalStoreKitCA.make()
        let trusted = verifier(trusting: ca)
        // Untrusted root: a chain from another CA.
        let stranger = try LocalStoreKitCA.make(name: "Someone Else")
        #expect(await rejection(try await stranger.sign(Self.transaction()), trusted) == "jws_untrusted_root")
        // Missing marker OIDs: a trusted chain without Apple's extensions.
        let unmarked = try LocalStoreKitCA.make(name: "Unmarked", markers: false)
        #expect(await rejection(try await unmarked.sign(Self.transaction()), verifier(trusting: unmarked)) == "jws_missing_marker_oid")
        // Bad signature: the payload changed after signing.
        let token = try await ca.sign(Self.transaction())
        let parts = token.split(separator: ".").map(String.init)
        var forged = Self.transaction()
        forged.productId = "premium_yearly"
        let forgedPayload = try JSONEncoder().encode(forged).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        #expect(await rejection([parts[0], forgedPayload, parts[2]].joined(separator: "."), trusted) == "jws_bad_signature")
        // Wrong bundle and wrong environment.
        #expect(await rejection(try await ca.sign(Self.transaction(bundle: "com.other.app")), trusted) == "jws_wrong_bundle")
        #expect(await rejection(try await ca.sign(Self.transaction(environment: "Production")), trusted) == "jws_wrong_environment")
        // Malformed tokens.
        for junk in ["", "abc", "a.b.c", parts[0] + ".e30." + parts[2], "eyJhbGciOiJIUzI1NiJ9.e30.c2ln"] {
            #expect(await rejection(junk, trusted) == "jws_malformed", "\(junk.prefix(30))")
        }
    }

    /// A chain validated once is not validated again while it is valid, but every token's
    /// signature still is, and past the chain's end it is refused.
    @Test func aValidatedChainIsRememberedOnlyWhileItIsValid() async throws {
        let ca = try LocalStoreKitCA.make(validUntil: Self.now.addingTimeInterval(86_400))
        let trusted = verifier(trusting: ca)
        let token = try await ca.sign(Self.transaction())
        #expect(await rejection(token, trusted) == nil)
        #expect(await rejection(token, trusted) == nil, "again, from what was remembered")
        let parts = token.split(separator: ".").map(String.init)
        var forged = Self.transaction()
        forged.productId = "premium_yearly"
        let forgedPayload = try JSONEncoder().encode(forged).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        #expect(await rejection([parts[0], forgedPayload, parts[2]].joined(separator: "."), trusted) == "jws_bad_signature")
        do {
            _ = try await trusted.verify(token, as: AppStoreTransaction.self, now: Self.now.addingTimeInterval(2 * 86_400))
            Issue.record("an expired chain was accepted")
        } catch {
            #expect(error.code == "jws_untrusted_root")
        }
    }

    @Test func theLocalChainIsKeptInTheDataDirectory() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("savedesk-ca-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let first = try LocalStoreKitCA.loadOrCreate(in: directory)
        let second = try LocalStoreKitCA.loadOrCreate(in: directory)
        #expect(first.root == second.root && first.leaf == second.leaf)
        #expect(first.leafKey.publicKey.rawRepresentation == second.leafKey.publicKey.rawRepresentation)
        // What the reloaded chain signs, a verifier trusting the first root accepts.
        let token = try await second.sign(Self.transaction())
        #expect(await rejection(token, verifier(trusting: first)) == nil)
    }

    /// Servers sharing a data directory (instances on PostgreSQL in one working directory, or the
    /// servers of one test process) that start together all get the one chain, and none fails.
    @Test func serversStartingTogetherOnOneDirectoryShareOneChain() async throws {
        for _ in 0..<5 {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("savedesk-ca-\(UUID())")
            defer { try? FileManager.default.removeItem(at: directory) }
            let chains = await withTaskGroup(of: Result<LocalStoreKitCA, any Error>.self) { group in
                for _ in 0..<8 {
                    group.addTask { await Task.detached { Result { try LocalStoreKitCA.loadOrCreate(in: directory) } }.value }
                }
                return await group.reduce(into: []) { $0.append($1) }
            }
            let loaded = try chains.map { try $0.get() }
            #expect(Set(loaded.map(\.root)).count == 1 && Set(loaded.map(\.leaf)).count == 1)
            let again = try LocalStoreKitCA.loadOrCreate(in: directory)
            #expect(again.root == loaded[0].root)
            let leftovers = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.contains(".tmp-") }
            #expect(leftovers.isEmpty)
        }
    }
}
