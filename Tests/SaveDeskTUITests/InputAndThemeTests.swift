import Foundation
import Testing

@testable import SaveDeskTUI
@testable import TerminalKit

@Suite("Mouse, themes")
@MainActor
struct InputAndThemeTests {
    /// Clicks land on what the frame drew there: a customer row, an option, a button.
    @Test func clicksChooseRowsOptionsAndButtons() async throws {
        let h = try await Harness.start()
        defer { Task { await h.stop() } }
        func click(_ id: String) async throws {
            let hit = try #require(h.frame().hits.last { $0.id == id }, "nothing named \(id) on screen")
            await h.press(.mouse(x: hit.rect.x + 1, y: hit.rect.y))
        }
        try await click("customer.0")
        #expect(h.text().contains("Ava Thompson (cus_ava)"))
        try await click("action.0")
        #expect(h.text().contains("What's the main reason"))
        try await click("choice.2")
        #expect(h.text().contains("3 (\u{2022})   I don't use it enough"))
        try await click("button.0")
        #expect(h.text().contains("How long have you been reading with us?"))
    }

    /// Every screen that loads draws its failure with a Retry button (LoadPhaseView); a click on it
    /// reloads on the analytics and timeline screens as on the home and customer screens.
    @Test func aFailedLoadShowsRetryAndAClickOnItReloads() async throws {
        let h = try await Harness.start(timeout: .seconds(2))
        await h.stop()
        await h.press(.character("a"))
        #expect(h.text().contains("could not be reached") && h.text().contains("[\u{25B8}Retry\u{25C2}]"), "\(h.text())")
        #expect(h.frame().hits.contains { $0.id == "retry" })
        let analytics = AnalyticsScreen(report: h.app.model.makeFunnelReport())
        let timeline = TimelineScreen(overview: h.app.model.makeOverview(customerId: "cus_ava"))
        guard case .reload? = analytics.action(forClick: "retry") else { Issue.record("analytics: Retry does nothing"); return }
        guard case .reload? = timeline.action(forClick: "retry") else { Issue.record("timeline: Retry does nothing"); return }
    }

    @Test func themesByNameByPathAndABadOneFallsBack() throws {
        #expect(ThemeChoice.resolve(nil, environment: [:]).theme == .builtInDefault)
        let light = ThemeChoice.resolve("light", environment: [:])
        #expect(light.theme.name == "Light" && light.problem == nil)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("theme-\(UUID()).toml")
        try "name = \"Mine\"\n[roles.accent]\nfg = \"magenta\"\n".write(to: file, atomically: true, encoding: .utf8)
        #expect(ThemeChoice.resolve(file.path, environment: [:]).theme[.accent] == Style(foreground: .magenta))
        try "[roles.accent]\nfgg = \"magenta\"\n".write(to: file, atomically: true, encoding: .utf8)
        let bad = ThemeChoice.resolve(file.path, environment: [:])
        #expect(bad.theme == .builtInDefault && bad.problem?.contains("roles.accent.fgg: unknown key") == true)
        let missing = ThemeChoice.resolve("neon", environment: [:])
        #expect(missing.theme == .builtInDefault && missing.problem?.contains("default, high-contrast, light, mono") == true)
        let noColor = ThemeChoice.resolve("light", environment: ["NO_COLOR": "1"]).theme
        #expect(noColor.styles.values.allSatisfy { $0.foreground == .default && $0.background == .default })
    }
}
