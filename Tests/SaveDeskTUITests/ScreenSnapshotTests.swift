import Foundation
import Testing

@testable import SaveDeskTUI
@testable import TerminalKit

/// Every screen at 80×24 and 120×40 (text and styles), plus the too-small message.
@Suite("Screen snapshots")
@MainActor
struct ScreenSnapshotTests {
    @Test func homeSearchAndEmptyResults() async throws {
        let h = try await Harness.start()
        defer { Task { await h.stop() } }
        try Snapshot.check(h, "home")
        await h.type("zzz")
        try Snapshot.check(h, "home-no-match")
        #expect(h.text().contains("No customer matches \u{201C}zzz\u{201D}."))
    }

    /// With the demo's history: its stories first, the generated customers after them, the list's
    /// position on its own cells (no row's text under it), the ids whole or cut in the middle.
    @Test func homeWithTheGeneratedHistory() async throws {
        let h = try await Harness.start(history: true)
        defer { Task { await h.stop() } }
        try Snapshot.check(h, "home-with-history")
        let lines = h.text().split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines[3].contains("Ava Thompson") && lines[3].contains("Try: "))
        #expect(lines.contains { $0.contains("Diego Ramírez") })
        // The last row of the list keeps its own text and the position ends it.
        let last = String(lines[lines.count - 3])
        #expect(last.hasSuffix("1\u{2013}19 of 20") || last.hasSuffix("1\u{2013}19 of 20 "), "\(last)")
        #expect(last.contains("cus_hist_") && last.contains("\u{2026} 1\u{2013}19"), "\(last)")
        // Only the generated history, each id whole.
        await h.press(.down, .character("f"), .character("f"))
        try Snapshot.check(h, "home-generated-history")
        let ids = h.text().split(separator: "\n").compactMap { $0.split(separator: " ").first { $0.hasPrefix("cus_hist_") } }
        #expect(ids.count >= 15 && Set(ids).count == ids.count && ids.allSatisfy { !$0.contains("\u{2026}") }, "\(ids)")
        #expect(h.text().contains("202 generated customers \u{00B7} page 1 of 11"))
    }

    /// The home list's rows are built once for a page and kept, so a selection move only redraws:
    /// they follow the search, the page and the width (ids cut to 14 columns, whole up to 20 from
    /// 100 columns on).
    @Test func theHomeListsRowsFollowTheSearchThePageAndTheWidth() async throws {
        let h = try await Harness.start()
        defer { Task { await h.stop() } }
        try await h.addCustomers(named: (0..<30).map { "Zed Quill \($0)" }, idPrefix: "cus_imported_00000")
        func names(_ width: Int = 80) -> Set<String> {
            Set(h.text(width, 24).matches(of: /Zed Quill \d+/).map { String($0.output) })
        }
        func ids(_ width: Int) -> [String] {
            h.text(width, 24).split(separator: "\n").compactMap { $0.split(separator: " ").first { $0.hasPrefix("cus_im") }.map(String.init) }
        }
        #expect(names().isEmpty)
        await h.type("quill")
        let first = names()
        #expect(first.count == 19, "a page of 20 in 19 rows: \(h.text())")
        #expect(!ids(80).isEmpty && ids(80).allSatisfy { $0.count == 14 && $0.contains("\u{2026}") }, "\(ids(80))")
        #expect(!ids(120).isEmpty && ids(120).allSatisfy { $0.hasPrefix("cus_imported_00000") && !$0.contains("\u{2026}") }, "\(ids(120))")
        #expect(ids(80).allSatisfy { $0.count == 14 && $0.contains("\u{2026}") }, "back to 80 columns: \(ids(80))")
        await h.press(.down, .down)
        #expect(names() == first, "a move keeps the page's rows")
        await h.press(.character("]"))
        #expect(h.text().contains("page 2 of 2"), "\(h.text())")
        #expect(names().count == 10 && names().isDisjoint(with: first), "\(names())")
        await h.press(.character("/"))
        await h.type("n7@many.example")
        #expect(names() == ["Zed Quill 7"], "\(h.text())")
    }

    /// A search that matches more than the server counts: the footer says "1000+".
    @Test func aSearchPastTheCapSaysSoInTheFooter() async throws {
        let h = try await Harness.start()
        defer { Task { await h.stop() } }
        try await h.addCustomers(named: (0..<1_050).map { "Ava Okafor \($0)" })
        await h.type("okafor")
        try Snapshot.check(h, "home-capped")
        #expect(h.text().contains("1000+ customers \u{00B7} page 1 of"), "\(h.text())")
    }

    @Test func customerOverviews() async throws {
        let h = try await Harness.start()
        defer { Task { await h.stop() } }
        await h.type("olivia")
        await h.press(.enter)
        #expect(h.text().contains("Grace period"))
        try Snapshot.check(h, "customer-grace-period")
        await h.press(.character("/"))
        await h.type("ivan")
        await h.press(.enter)
        #expect(h.prose().contains("Expired (cancelled) \u{00B7} win-back available"))
        try Snapshot.check(h, "customer-expired")
        await h.press(.character("t"))
        try Snapshot.check(h, "timeline")
    }

    /// A customer the server was just told of (an import, an app's first write): found at once by
    /// the search, named "New customer" until there is a name, and the screen says there is nothing yet.
    @Test func aCustomerWithNothingSaysSo() async throws {
        let h = try await Harness.start()
        defer { Task { await h.stop() } }
        _ = try await h.app.model.client.createCustomer(id: "reader-new-1", .init(email: "new.reader@example.com"))
        // By its exact id (an app's user id, as the customer reads it from the app).
        await h.type("reader-new-1")
        await h.press(.enter)
        #expect(h.prose().contains("New customer"), "\(h.text())")
        #expect(h.prose().contains("None yet."), "\(h.text())")
        try Snapshot.check(h, "customer-new")
    }

    /// At 80×24 nothing an agent reads out is cut: the switch-and-save reasons wrap, the overall
    /// state wraps, and the selected action's note is shown in full, for every action of the demo
    /// customers with the longest reasons.
    @Test func theLongestDemoReasonsAreReadableAt80x24() async throws {
        let h = try await Harness.start()
        defer { Task { await h.stop() } }
        for (number, customer) in ["ben", "maya", "liam", "nora", "hana", "olivia", "george", "priya"].enumerated() {
            if number > 0 { await h.press(.character("/")) }
            await h.type(customer)
            await h.press(.enter)
            let screen = try #require(h.app.currentScreen as? CustomerScreen)
            let overview = screen.overview
            #expect(overview.phase == .loaded, "\(customer)")
            for reason in overview.switchAndSave?.reasons ?? [] {
                #expect(h.prose().contains(reason.message), "\(customer): \(reason.message)\n\(h.text())")
            }
            if let standing = overview.standing {
                #expect(h.prose().contains(standing.headline), "\(customer): \(standing.headline)\n\(h.text())")
                if let detail = standing.detail { #expect(h.prose().contains(detail), "\(customer): \(detail)") }
            }
            for (index, action) in overview.actions.enumerated() {
                if index > 0 { await h.press(.down) }
                if let note = action.note { #expect(h.prose().contains(note), "\(customer), action \(index + 1): \(note)\n\(h.text())") }
            }
            if customer == "ben" {
                await h.press(.up, .up, .up, .up, .up, .up)
                try Snapshot.check(h, "customer-longest-reasons", sizes: [(80, 24)])
            }
            if customer == "hana" {
                await h.press(.up, .up, .up, .up, .up, .up)
                try Snapshot.check(h, "customer-mid-switch", sizes: [(80, 24)])
            }
        }
    }

    /// The App Store half: the switch as the save offer (with the note that Apple has no pause),
    /// the steps to read out, the flow waiting for Apple; and the switch's checkout inline.
    @Test func theAppStoreCancelFlow() async throws {
        let h = try await Harness.start()
        defer { Task { await h.stop() } }
        await h.type("diego")
        await h.press(.enter, .character("c"), .character("2"), .enter)
        #expect(h.prose().contains("Apple has no pause: Premium Monthly is billed by the App Store, so it cannot be paused."))
        try Snapshot.check(h, "cancel-app-store-switch-offer", sizes: [(80, 24)])
        await h.press(.character("n"))
        try Snapshot.check(h, "cancel-app-store-confirmation", sizes: [(80, 24)])
        await h.press(.enter)
        #expect(h.text().contains("Cancelled \u{00B7} waiting for Apple"))
        try Snapshot.check(h, "cancel-app-store-waiting", sizes: [(80, 24)])
        await h.press(.character("o"))
        #expect(h.text().contains("Cancelled \u{00B7} confirmed by Apple"))
        await h.press(.escape, .character("/"))
        await h.type("chloe")
        await h.press(.enter, .character("c"), .character("1"), .enter, .character("y"))
        #expect(h.text().contains("Waiting for the customer to pay"))
        try Snapshot.check(h, "cancel-app-store-checkout", sizes: [(80, 24)])
        await h.press(.character("p"))
        try Snapshot.check(h, "cancel-app-store-switched", sizes: [(80, 24)])
    }

    @Test func theCancelFlowPageByPage() async throws {
        let h = try await Harness.start()
        defer { Task { await h.stop() } }
        await h.type("ava")
        await h.press(.enter, .character("c"))
        try Snapshot.check(h, "cancel-question")
        await h.press(.character("3"), .enter, .enter)
        await h.type("More comics, please! 日本語も")
        try Snapshot.check(h, "cancel-free-text")
        await h.press(.enter)
        try Snapshot.check(h, "cancel-save-offer")
        #expect(h.text().contains("Now $7.99/month  \u{2192}  with the offer $4.79/month"))
        await h.press(.character("n"))
        try Snapshot.check(h, "cancel-pause-picker")
        #expect(h.text().contains("1 month \u{2014} resumes Dec 22, 2026"))
        await h.press(.character("n"))
        try Snapshot.check(h, "cancel-confirmation")
        #expect(h.text().contains("access until Dec 4, 2026"))
        await h.press(.character("?"))
        try Snapshot.check(h, "help-overlay")
        await h.press(.character("x"), .character("q"))
        try Snapshot.check(h, "quit-confirmation")
        await h.press(.character("n"), .enter)
        try Snapshot.check(h, "cancel-outcome")
        #expect(h.text().contains("Cancelled; access until Dec 4, 2026"))
    }

    @Test func switchAndSaveThroughEveryState() async throws {
        let h = try await Harness.start()
        defer { Task { await h.stop() } }
        await h.type("chloe")
        await h.press(.enter, .character("s"))
        try Snapshot.check(h, "switch-eligible")
        await h.press(.enter)
        #expect(h.text().contains("Waiting for the customer to pay"))
        try Snapshot.check(h, "switch-checkout")
        await h.press(.character("p"))
        try Snapshot.check(h, "switch-cancel-apple-billing")
        await h.press(.character("o"))
        #expect(h.text().contains("You're all set!") && h.text().contains("forever, with no double charge."))
        try Snapshot.check(h, "switch-completed")
        await h.press(.character("/"))
        await h.type("nora")
        await h.press(.enter, .character("s"))
        try Snapshot.check(h, "switch-ineligible")
        #expect(h.text().contains("this campaign starts at 30"))
    }

    @Test func analyticsAndTheDemoDevice() async throws {
        let h = try await Harness.start()
        defer { Task { await h.stop() } }
        await h.press(.escape, .character("a"))  // Esc leaves the search field; a: analytics
        #expect(h.text().contains("How 0 cancel flows ended"), "\(h.text())")
        try Snapshot.check(h, "analytics-cancel-flow")
        await h.press(.tab)
        #expect(h.text().contains("Switch-and-save funnel"))
        try Snapshot.check(h, "analytics-switch-and-save")
        await h.press(.escape, .character("/"))
        await h.type("chloe")
        await h.press(.enter, .character("d"))
        try Snapshot.check(h, "demo-device")
        // Chloé (180 days on Premium) opens Apple's cancel page: the half-off offer.
        await h.press(.character("4"))
        #expect(h.text().contains("Apple's cancel page showed \u{201C}Stay for 50% off your next 3 months.\u{201D}"), "\(h.text())")
        try Snapshot.check(h, "demo-device-cancel-page")
        await h.press(.character("5"))
        #expect(h.text().contains("App Store auto_renew_off: applied"), "\(h.text())")
        // The analytics count it: one request, answered with the offer, not saved (renewal off).
        await h.press(.escape, .escape, .escape, .character("a"), .character("3"))
        #expect(h.text().contains("Apple's cancel page: 1 request"), "\(h.text())")
        try Snapshot.check(h, "analytics-cancel-page")
    }

    @Test func errorsShowAsToastsAndTooSmallSaysSo() async throws {
        // The default timeout: a stopped server's port is held, so calls to it are refused at once;
        // a short one could run out while a loaded machine answers the first screen.
        let h = try await Harness.start()
        // The first screen whole (the session, the list) before the server goes (polled, bounded).
        for _ in 0..<400 where !(h.text().contains("16 customers") && h.text().contains("Marco (support)")) {
            try await Task.sleep(for: .milliseconds(25))
        }
        await h.stop()
        await h.press(.character("/"))
        await h.type("ben")
        #expect(h.text().contains("could not be reached"))
        #expect(h.text().contains("offline (r retry)"), "every call keeps the connection state true")
        h.app.model.show("the SaveDesk server could not be reached", isError: true) { }
        try Snapshot.check(h, "error-toast")
        try Snapshot.check(h, "too-small", sizes: [(59, 17)])
        #expect(h.text(59, 17).contains("Enlarge the window to at least 60\u{00D7}18"))
    }
}
