import SaveDeskViewModels
import TerminalKit

/// Customer search (home): type to search (debounced), arrows to choose, Enter to open.
@MainActor
final class HomeScreen: Screen {
    let directory: CustomerDirectory
    private var field = TextFieldState()
    private var searchFocused = true

    init(directory: CustomerDirectory) { self.directory = directory }

    var title: String { "Customers" }
    var isTyping: Bool { searchFocused }
    var keys: [KeyHelp] {
        [KeyHelp("type", "search by id, email or name"), KeyHelp("\u{2193} Tab", "to the list"), KeyHelp("Enter", "open the customer"),
         KeyHelp("PgUp PgDn [ ]", "previous / next page"), KeyHelp("Esc", "clear the search, then leave the field")]
    }

    func appear(app: TUIApp) { app.perform { await self.directory.reload() } }

    /// `/`: a new search, the cursor in the field.
    func focusSearch(app: TUIApp) {
        searchFocused = true
        guard !field.text.isEmpty else { return }
        field.set("")
        search(app)
    }

    func handle(_ key: KeyEvent, app: TUIApp) -> Bool {
        if searchFocused {
            switch key {
            case .down, .tab:
                searchFocused = false
                return true
            case .enter:
                searchFocused = false
                if directory.customers.count == 1 { open(app) }
                return true
            case .escape:
                // Esc clears the search; on an empty one it leaves the field (the app's keys work again).
                if field.text.isEmpty { searchFocused = false } else {
                    field.set("")
                    search(app)
                }
                return true
            case .backspace where field.text.isEmpty:
                return true
            default:
                guard field.handle(key) else { return false }
                search(app)
                return true
            }
        }
        switch key {
        case .up, .character("k"):
            if directory.selectedIndex == 0 { searchFocused = true } else { directory.moveSelection(by: -1) }
        case .down, .character("j"): directory.moveSelection(by: 1)
        case .tab, .backTab: searchFocused = true
        case .enter, .right: open(app)
        case .pageDown, .character("]"): app.perform { await self.directory.nextPage() }
        case .pageUp, .character("["): app.perform { await self.directory.previousPage() }
        case .character(let c) where c.isLetter || c.isNumber:
            // Typing anywhere searches.
            guard c != "q", c != "a", c != "d", c != "r", c != "x" else { return false }
            searchFocused = true
            field.insert(c)
            search(app)
        default: return false
        }
        return true
    }

    func click(_ id: String, app: TUIApp) {
        if id == "search" { searchFocused = true }
        if id.hasPrefix("customer."), let index = Int(id.dropFirst(9)) {
            directory.select(index: index)
            searchFocused = false
            open(app)
        }
        if id == "retry" { app.perform { await self.directory.reload() } }
    }

    /// Searches after the debounce; the app counts it as work until the answer is in.
    private func search(_ app: TUIApp) {
        directory.setQuery(field.text)
        app.perform { await self.directory.settle() }
    }

    private func open(_ app: TUIApp) {
        guard let customer = directory.selectedCustomer else { return }
        app.open(.customer(id: customer.id))
    }

    func render(into frame: inout Frame, area: Rect, context: RenderContext) {
        let theme = context.theme
        let (top, rest) = area.splitTop(2)
        let label = frame.buffer.put("Search ", x: top.x, y: top.y, style: theme[.title])
        let fieldRect = Rect(x: top.x + label, y: top.y, width: min(48, top.width - label), height: 1)
        field.draw(in: fieldRect, placeholder: "id, email or name", focused: searchFocused, theme: theme, into: &frame)
        frame.hit(fieldRect, "search")
        let (list, footer) = rest.splitBottom(1)
        switch directory.phase {
        case .loading where directory.customers.isEmpty:
            frame.buffer.put("Loading customers\u{2026}", x: list.x, y: list.y, style: theme[.muted])
        case .failed(let message):
            Text.draw(message, in: Rect(x: list.x, y: list.y, width: list.width, height: 3), style: theme[.danger], into: &frame.buffer)
            Button.draw("Retry", id: "retry", x: list.x, y: list.y + 3, focused: true, theme: theme, into: &frame)
        case .empty(let message):
            frame.buffer.put(message, x: list.x, y: list.y, style: theme[.muted])
        default:
            let nameWidth = min(22, max(12, directory.customers.map { CharacterWidth.of($0.name) }.max() ?? 12))
            let items = directory.customers.map { customer in
                ListView.Item(CharacterWidth.pad(customer.name, to: nameWidth) + "  " + CharacterWidth.pad(customer.id, to: 11) + "  " + customer.summary)
            }
            ListView.draw(items, selected: searchFocused ? nil : directory.selectedIndex, in: list, theme: theme,
                          hitPrefix: "customer.", into: &frame)
        }
        let pages = "\(directory.total) customer\(directory.total == 1 ? "" : "s") \u{00B7} page \(directory.page) of \(directory.pageCount)"
        frame.buffer.put(pages, x: footer.x, y: footer.y, style: theme[.muted])
    }
}
