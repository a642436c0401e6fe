import SaveDeskViewModels
import TerminalKit

/// Customer search (home): type to search (debounced), arrows to choose, Enter to open. With no
/// search the list starts with the demo's walk-through stories, each with what to try, and ends
/// with the generated history; `f` shows one kind alone.
@MainActor
final class HomeScreen: Screen {
    let directory: CustomerDirectory
    private var field = TextFieldState()
    private var searchFocused = true
    private var builtRows: (customers: [CustomerSummary], columns: Int, items: [ListView.Item])?

    init(directory: CustomerDirectory) { self.directory = directory }

    var title: String { "Customers" }
    var isTyping: Bool { searchFocused }
    enum Action {
        case edit(KeyEvent), leaveField(open: Bool), clearOrLeave, ignore
        case move(Int), toField, open(Int?), nextPage, previousPage, typeFromList(Character), retry, cycleFilter
    }

    var keyMap: KeyMap<Action> {
        if searchFocused {
            return KeyMap([
                .matching("type", "search by id, email or name") { key in
                    // Backspace in an empty field does nothing (it is not "back" while typing).
                    guard TextFieldState.isEdit(key), key != .backspace || !self.field.text.isEmpty else { return nil }
                    return .edit(key)
                },
                .on(.down, .tab, keys: "\u{2193} Tab", "to the list", .leaveField(open: false)),
                .on(.enter, keys: "Enter", "to the list (opens a single match)", .leaveField(open: true)),
                .on(.escape, keys: "Esc", "clear the search, then leave the field", .clearOrLeave),
                .on(.backspace, keys: "", "", .ignore),
            ])
        }
        return KeyMap([
            .upDown("move (\u{2191} from the top: the search)", up: .move(-1), down: .move(1)),
            .on(.enter, .right, keys: "Enter", "open the customer", .open(nil)),
            .on(.tab, .backTab, keys: "Tab", "to the search", .toField),
            .on(.pageDown, .character("]"), keys: "PgDn ]", "next page", .nextPage),
            .on(.pageUp, .character("["), keys: "PgUp [", "previous page", .previousPage),
            .on(.character("f"), keys: "f", "show all, the demo stories, or the generated history", .cycleFilter),
            // Typing anywhere searches, except the letters the app has a use for.
            .matching("type", "search") { key in
                guard case .character(let c) = key, c.isLetter || c.isNumber, !AppKeys.isAppKey(key) else { return nil }
                return .typeFromList(c)
            },
        ])
    }

    func appear() -> Intent { .run { await self.directory.reload() } }

    /// `/`: a new search, the cursor in the field.
    func focusSearch() -> Intent {
        searchFocused = true
        guard !field.text.isEmpty else { return .none }
        field.set("")
        return search()
    }

    func action(forClick id: String) -> Action? {
        switch id {
        case "search": .toField
        case "retry": .retry
        default: index(of: id, prefix: "customer.").map { .open($0) }
        }
    }

    func perform(_ action: Action, context: ScreenContext) -> Intent {
        switch action {
        case .edit(let key):
            _ = field.handle(key)
            return search()
        case .leaveField(let openSingle):
            searchFocused = false
            return openSingle && directory.customers.count == 1 ? open() : .none
        case .clearOrLeave:
            // Esc clears the search; on an empty one it leaves the field (the app's keys work again).
            if field.text.isEmpty {
                searchFocused = false
                return .none
            }
            field.set("")
            return search()
        case .ignore: return .none
        case .move(let step):
            if step < 0, directory.selectedIndex == 0 { searchFocused = true } else { directory.moveSelection(by: step) }
            return .none
        case .toField:
            searchFocused = true
            return .none
        case .open(let index):
            if let index { directory.select(index: index) }
            searchFocused = false
            return open()
        case .nextPage: return .run { await self.directory.nextPage() }
        case .previousPage: return .run { await self.directory.previousPage() }
        case .typeFromList(let c):
            searchFocused = true
            field.insert(c)
            return search()
        case .retry: return appear()
        case .cycleFilter: return .run { await self.directory.cycleFilter() }
        }
    }

    /// Searches after the debounce; the app counts it as work until the answer is in.
    private func search() -> Intent {
        directory.setQuery(field.text)
        return .run { await self.directory.settle() }
    }

    /// The list's rows for a page of customers: the names and ids in columns as wide as the
    /// page needs, then the story or summary, cut with "…" to `columns`. Built once per page and
    /// width and kept, so a selection move (the frame a key causes most) only redraws.
    private func rows(_ customers: [CustomerSummary], columns: Int) -> [ListView.Item] {
        // Array equality is a pointer comparison while the page is the same array.
        if let built = builtRows, built.columns == columns, built.customers == customers { return built.items }
        let wide = columns + 2 >= 100  // a list 100 columns wide or wider: whole ids up to 20
        let nameWidth = min(22, max(12, customers.map { CharacterWidth.of(Display.customerName($0.name)) }.max() ?? 12))
        // Ids whole when they fit, else cut in the middle: ids of one prefix differ at the end.
        let idWidth = min(wide ? 20 : 14, max(9, customers.map { CharacterWidth.of($0.id) }.max() ?? 9))
        let items = customers.map { customer in
            let line = customer.story.map { "Try: " + $0 } ?? customer.summary
            return ListView.Item(CharacterWidth.truncate(CharacterWidth.pad(Display.customerName(customer.name), to: nameWidth) + "  "
                + CharacterWidth.pad(CharacterWidth.cutMiddle(customer.id, to: idWidth), to: idWidth) + "  " + line, to: columns))
        }
        builtRows = (customers, columns, items)
        return items
    }

    private func open() -> Intent {
        guard let customer = directory.selectedCustomer else { return .none }
        return .open(.customer(id: customer.id))
    }

    func render(into frame: inout Frame, area: Rect, context: RenderContext) {
        let theme = context.theme
        let (top, rest) = area.splitTop(2)
        let label = frame.buffer.put("Search ", x: top.x, y: top.y, style: theme[.title])
        let fieldRect = Rect(x: top.x + label, y: top.y, width: min(48, top.width - label), height: 1)
        frame.render(TextField(placeholder: "id, email or name", focused: searchFocused, theme: theme), in: fieldRect, state: field)
        frame.hit(fieldRect, "search")
        let (list, footer) = rest.splitBottom(1)
        if directory.phase == .loaded, let message = directory.emptyMessage {
            frame.render(Line(message, style: theme[.muted]), in: list)
        } else if LoadPhaseView.replacesContent(directory.phase, hasContent: !directory.customers.isEmpty) {
            frame.render(LoadPhaseView(phase: directory.phase, loading: "Loading customers\u{2026}", canRetry: true, theme: theme), in: list)
        } else {
            // A row's text has the list's width less the marker and the space after it.
            frame.render(ListView(rows(directory.customers, columns: list.width - 2), selected: searchFocused ? nil : directory.selectedIndex,
                                  theme: theme, hitPrefix: "customer."), in: list)
        }
        let shown = directory.filter.map { CustomerDirectory.name($0) } ?? "customer\(directory.total == 1 && !directory.totalCapped ? "" : "s")"
        var pages = "\(directory.totalText) \(shown) \u{00B7} page \(directory.page) of \(directory.pageCount)"
        if directory.filter != nil || directory.customers.contains(where: { $0.kind != .customer }) { pages += " \u{00B7} f: filter" }
        frame.buffer.put(pages, x: footer.x, y: footer.y, style: theme[.muted])
    }
}
