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
        #expect(h.text().contains("win-back available"))
        try Snapshot.check(h, "customer-expired")
        await h.press(.character("t"))
        try Snapshot.check(h, "timeline")
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
        #expect(h.text().contains("Saving 20% forever"))
        try Snapshot.check(h, "switch-completed")
        await h.press(.character("/"))
        await h.type("diego")
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
        await h.press(.character("4"))
        #expect(h.text().contains("App Store auto_renew_off: applied"), "\(h.text())")
    }

    @Test func errorsShowAsToastsAndTooSmallSaysSo() async throws {
        let h = try await Harness.start()
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
