import Foundation
import RetentionDomain
import SQLKit
import SaveDeskAPI
import Testing

@testable import SaveDeskServer

@Suite("Demo seed")
struct SeedCoverageTests {
    /// The server's facts about a customer, judged by the one eligibility rule of RetentionDomain.
    func decision(_ server: TestServer, _ id: String) async throws -> SwitchAndSaveEligibility.Decision {
        let raw = try await server.raw(.GET, "/v1/iap/entitlements?user_id=\(id)")
        struct Body: Decodable { var entitlements: [Entitlement] }
        let entitlements = try WireFormat.decoder().decode(Body.self, from: Data(raw.body.utf8)).entitlements
        let profile = try await server.desk.getCustomer(path: .init(customerId: id)).ok.body.json.profile
        let dismissal = try await server.withStore { store in
            try await store.exclusive { db in
                try await db.select().columns("dismissed_by", "dismissed_at").from("switch_dismissals")
                    .where("customer_id", .equal, id).first()
            }
        }.map { row in
            SwitchAndSaveEligibility.Dismissal(
                dismissedAt: Date(unixSeconds: try row.decode(column: "dismissed_at", as: Int64.self)),
                dismissedBy: try row.decode(column: "dismissed_by", as: String.self)
            )
        }
        return SwitchAndSaveEligibility.evaluate(.init(
            userId: id, campaign: server.config.campaign, catalog: server.config.products.map(\.product),
            entitlements: entitlements, jurisdiction: profile.country, dismissal: dismissal, now: server.clock.now()
        ))
    }

    @Test func everySwitchAndSaveOutcomeIsSeeded() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        #expect(try await decision(server, "cus_chloe").state == .eligible)
        #expect(try await decision(server, "cus_diego").state == .eligible, "the cancel flow's App Store walk-through")
        #expect(try await decision(server, "cus_hana").state == .accepted, "mid-switch, Apple still renewing")
        let expected: [String: IneligibleReason.Code] = [
            "cus_nora": .tenureTooShort, "cus_ben": .notInRollout, "cus_george": .alreadySwitched,
            "cus_maya": .jurisdictionNotAllowed, "cus_liam": .dismissed, "cus_ivan": .noAppStoreSubscription,
        ]
        for (id, code) in expected {
            let reasons = try await decision(server, id).reasons
            #expect(reasons.map(\.code) == [code], "\(id): \(reasons.map(\.message))")
        }
        #expect(try await decision(server, "cus_liam").reasons.first?.message == "offer dismissed by Marco (support) on Nov 19, 2026")
    }

    @Test func aSeedIsAppliedOnceAndABadSeedNamesItsKey() async throws {
        let server = try await TestServer.start()
        await server.stop()
        let again = try await DemoSeed.apply(
            file: try #require(DemoSeed.demoSeedPath), config: server.config, databasePath: server.databasePath
        )
        #expect(again == 0, "a database with customers is left alone")
        let bad = server.directory.appendingPathComponent("bad-seed.toml")
        try """
            [[customers]]
            id = "cus_x"
            name = "X"
            email = "x@example.com"
            [[customers.subscriptions]]
            product = "gold"
            sorce = "web"
            """.write(to: bad, atomically: true, encoding: .utf8)
        do {
            _ = try await DemoSeed.apply(file: bad.path, config: server.config, databasePath: server.databasePath)
            Issue.record("a bad seed was applied")
        } catch let error as InvalidConfig {
            #expect(error.issues.map(\.description) == [
                "customers[0].subscriptions[0].sorce: unknown key",
                "customers[0].subscriptions[0].product: no product \"gold\" in the config",
            ])
        }
    }
}
