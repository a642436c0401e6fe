import Foundation
import SaveDeskClient
import Testing

@testable import SaveDeskViewModels

/// The customer directory and the funnel report against an in-memory desk (no server): the
/// rules of search-as-you-type, paging, failures and filters, in milliseconds. ConsoleTests runs
/// the same view models against the real server.
@MainActor
@Suite("Directory and funnel (fakes)")
struct DirectoryAndFunnelFakeTests {
    static let names = ["Ava Thompson", "Ben Ortiz", "Chloé Martin", "Avery Stone"] + (1...41).map { "Zed \($0)" }

    @Test func keystrokesWithinTheDebounceAreOneSearchAndOnlyTheNewestAnswerShows() async {
        let calls = FakeDeskCalls(names: Self.names)
        let directory = CustomerDirectory(calls: calls, debounce: .milliseconds(20))
        await directory.reload()
        #expect(directory.phase == .loaded && directory.total == 45 && directory.pageCount == 3 && directory.customers.count == 20)
        for text in ["a", "av", "ava"] { directory.setQuery(text) }
        await directory.settle()
        #expect(calls.searches == ["", "ava"], "one search for three keystrokes")
        #expect(directory.customers.map(\.name) == ["Ava Thompson"])

        // A slow answer overtaken by a newer search never replaces it.
        calls.delay("av", by: .milliseconds(300))
        directory.setQuery("av")
        try? await Task.sleep(for: .milliseconds(60))  // the "av" search is on its way
        directory.setQuery("ben")
        await directory.settle()
        #expect(directory.customers.map(\.name) == ["Ben Ortiz"])
        try? await Task.sleep(for: .milliseconds(300))
        #expect(directory.customers.map(\.name) == ["Ben Ortiz"] && directory.phase == .loaded, "the late \"av\" answer is dropped")

        directory.setQuery("nobody")
        await directory.settle()
        #expect(directory.phase == .loaded && directory.customers.isEmpty
                && directory.emptyMessage == "No customer matches \u{201C}nobody\u{201D}.")
    }

    /// The console asks for the first page as it starts (`AppModel.askForFirstPageEarly`): the
    /// question is on its way before any directory exists, the first directory's first load shows
    /// that answer without asking again, and every later load asks anew.
    @Test func theFirstPageAskedEarlyIsTheFirstLoadsAnswerAndOnlyItsOwn() async {
        let calls = FakeDeskCalls(names: Self.names)
        calls.delay("", by: .milliseconds(50))
        let early = EarlyFirstPage(calls: calls, perPage: CustomerDirectory.defaultPerPage)
        let deadline = ContinuousClock.now + .seconds(10)
        while calls.searches.isEmpty, ContinuousClock.now < deadline { await Task.yield() }
        #expect(calls.searches == [""], "asked before any directory exists")
        let directory = CustomerDirectory(calls: early, debounce: .zero)
        await directory.reload()
        #expect(directory.phase == .loaded && directory.total == 45 && calls.searches == [""], "the first load took the early answer")
        await directory.reload()
        directory.setQuery("ava")
        await directory.settle()
        #expect(calls.searches == ["", "", "ava"], "later loads ask")
        #expect(directory.customers.map(\.name) == ["Ava Thompson"])
    }

    /// A server that is down when the console starts: the first load shows the early call's
    /// failure, and Retry (a second load) asks the server again.
    @Test func aFailedEarlyFirstPageIsTheFirstLoadsFailureAndRetryAsksAgain() async {
        let calls = FakeDeskCalls(names: Self.names)
        calls.setDown(true)
        let early = EarlyFirstPage(calls: calls, perPage: CustomerDirectory.defaultPerPage)
        let directory = CustomerDirectory(calls: early, debounce: .zero)
        await directory.reload()
        #expect(directory.phase == .failed("the SaveDesk server could not be reached"))
        calls.setDown(false)
        await directory.reload()
        #expect(directory.phase == .loaded && directory.total == 45)
    }

    @Test func pagingAndSelectionStayInRange() async {
        let calls = FakeDeskCalls(names: Self.names)
        let directory = CustomerDirectory(calls: calls, debounce: .zero)
        await directory.reload()
        await directory.previousPage()
        #expect(directory.page == 1 && calls.searches.count == 1, "no page before the first")
        await directory.nextPage()
        await directory.nextPage()
        await directory.nextPage()
        #expect(directory.page == 3 && directory.customers.count == 5 && calls.searches.count == 3, "no page after the last")
        directory.moveSelection(by: 100)
        #expect(directory.selectedIndex == 4)
        directory.moveSelection(by: -100)
        #expect(directory.selectedIndex == 0)
    }

    @Test func aFailedSearchSaysWhyAndAReloadRecovers() async {
        let calls = FakeDeskCalls(names: Self.names)
        let directory = CustomerDirectory(calls: calls, debounce: .zero)
        calls.setDown(true)
        await directory.reload()
        #expect(directory.phase == .failed("the SaveDesk server could not be reached"))
        calls.setDown(false)
        await directory.reload()
        #expect(directory.phase == .loaded && directory.total == 45)
    }

    @Test func theReportLoadsEachViewWithItsFiltersAndSaysWhyItFailed() async {
        let calls = FakeDeskCalls(names: [])
        let report = FunnelReport(calls: calls)
        let now = Date(timeIntervalSince1970: 1_790_000_000)
        await report.apply(.last(7, until: now, operatorName: "marco"))
        #expect(report.phase == .loaded && report.outcomeBars.map(\.value) == [3, 2, 1, 1])
        let filters = calls.analyticsFilters.last
        #expect(filters?.from == now.addingTimeInterval(-7 * 86_400) && filters?.to == now && filters?.operator == "marco")
        await report.show(.switchAndSave)
        #expect(report.phase == .loaded && report.funnelBars.map(\.value) == [5, 3, 1])
        calls.setDown(true)
        await report.load()
        #expect(report.phase == .failed("the SaveDesk server could not be reached"))
        #expect(report.funnelBars.map(\.value) == [5, 3, 1], "what was shown stays until a load succeeds")
        calls.setDown(false)
        await report.load()
        #expect(report.phase == .loaded)
    }
}
