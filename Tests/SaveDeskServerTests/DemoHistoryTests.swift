import Foundation
import SaveDeskAPI
import Testing

@testable import SaveDeskServer

/// The demo's generated history: about 90 days, deterministic, test mode only, and enough of it
/// that every analytics chart has shape.
@Suite("Demo history")
struct DemoHistoryTests {
    @Test func itIsDeterministicAndClearlyTestData() async throws {
        let config = try ConfigReader.load(file: try #require(DemoSeed.demoConfigPath))
        let one = try DemoHistory.generate(config: config, now: TestServer.start)
        let two = try DemoHistory.generate(config: config, now: TestServer.start)
        #expect(one.customers == two.customers && one.subscriptions == two.subscriptions)
        #expect(one.responses.map(\.id) == two.responses.map(\.id) && one.responses.map(\.outcome) == two.responses.map(\.outcome))
        #expect(one.customers.allSatisfy { $0.id.hasPrefix("cus_hist_") && $0.email.hasSuffix("@history.example") && !$0.livemode })
        #expect(one.subscriptions.allSatisfy { !$0.livemode })
        let oldest = try #require(one.responses.map(\.at).min()), newest = try #require(one.responses.map(\.at).max())
        #expect((newest - oldest) / 86_400 >= 85, "about 90 days")
        #expect((100...400).contains(one.responses.count), "\(one.responses.count) flows")
    }

    @Test func everyChartHasShape() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let added = try await DemoHistory.apply(config: server.config, databasePath: server.databasePath, now: TestServer.start)
        #expect(added > 100)
        #expect(try await DemoHistory.apply(config: server.config, databasePath: server.databasePath, now: TestServer.start) == 0, "once")

        let flows = try await server.desk.getCancelFlowAnalytics(query: .init()).ok.body.json
        let outcomes = flows.outcomes
        #expect(outcomes.retained > 0 && outcomes.paused > 0 && outcomes.cancelled > 0 && outcomes.dismissed > 0, "\(outcomes)")
        #expect(Set(flows.operators.map(\._operator)).isSuperset(of: ["Marco (support)", "Priya (support lead)", "app"]))
        #expect(flows.questions.allSatisfy { question in question.answers.allSatisfy { $0.count > 0 } || question.answers.isEmpty })
        #expect(flows.questions.last?.freeTextSamples.isEmpty == false)
        #expect(flows.pauseAccepted > flows.pauseApplied, "pauses chosen for App Store subscribers that could not apply")
        #expect(flows.appStoreCancellations.readOut > flows.appStoreCancellations.confirmed && flows.appStoreCancellations.confirmed > 0)
        #expect(flows.pauseDurations.count == 3 && flows.lastStepReached.count >= 2)
        let lastWeek = try await server.desk.getCancelFlowAnalytics(query: .init(from: TestServer.start.addingTimeInterval(-7 * 86_400))).ok.body.json
        #expect(lastWeek.outcomes.total > 0 && lastWeek.outcomes.total < outcomes.total / 5)

        let funnel = try await server.desk.getSwitchAndSaveAnalytics(query: .init()).ok.body.json.funnel
        #expect(funnel.impressions > funnel.conversions && funnel.conversions > funnel.completed && funnel.completed > 0, "\(funnel)")

        // Apple's cancel page: every kind of answer, the holdout, and a save rate for each.
        let pages = try await server.desk.getRetentionMessageAnalytics(query: .init()).ok.body.json
        #expect(Set(pages.messages.map(\.kind)) == ["message", "alternate_product", "promotional_offer"], "\(pages.messages)")
        #expect(pages.holdout.shown > 0 && pages.answered.shown > 5 * pages.holdout.shown, "\(pages)")
        #expect(pages.messages.allSatisfy { $0.figures.shown > 0 && $0.figures.saveRate > 0 && $0.messageText != nil }, "\(pages.messages)")
        #expect(pages.answered.redeemed > 0)
        #expect(pages.answered.saveRate > pages.holdout.saveRate, "the demo's answers save more than Apple's default: \(pages)")

        // The generated customers are whole: their screens load, and search finds them.
        let page = try await server.desk.searchCustomers(query: .init(query: "history.example", perPage: 100)).ok.body.json
        #expect(page.total == added)
        for customer in page.customers.prefix(25) {
            let detail = try await server.desk.getCustomer(path: .init(customerId: customer.id)).ok.body.json
            #expect(!detail.subscriptions.isEmpty, "\(customer.id)")
        }
    }
}
