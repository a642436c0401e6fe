import Foundation
import SaveDeskViewModels
import TerminalKit

/// One screen of the console. `render` is a pure function of the screen's view model and its own
/// small UI state (focus, the text being typed): it changes nothing. Keys and clicks become the
/// screen's actions (its `keyMap`, `action(forClick:)`); `perform` applies one to that UI state
/// and the view model, and returns what the app should do.
@MainActor
protocol Screen: AnyObject {
    associatedtype Action
    var title: String { get }
    /// The keys that apply now: the key handling and the help overlay (`?`) both read it.
    var keyMap: KeyMap<Action> { get }
    /// Leaving now would end something half-done (quitting asks first).
    var isMidFlow: Bool { get }
    /// A text field has the keys: printable keys (q, ?, /) type into it.
    var isTyping: Bool { get }
    func render(into frame: inout Frame, area: Rect, context: RenderContext)
    func perform(_ action: Action, context: ScreenContext) -> Intent
    /// The action of a region the screen named while rendering.
    func action(forClick id: String) -> Action?
    /// The screen is shown for the first time (load what it needs).
    func appear() -> Intent
    /// The screen is shown again after the one above it closed (show what changed meanwhile).
    func reappear() -> Intent
    /// The screen is being closed for good (back, or quit).
    func leave() -> Intent
    /// `/` from anywhere: a new search (the home screen's).
    func focusSearch() -> Intent
    /// Something the screen may show changed on the server (the event stream): what to do.
    func follow(_ change: LiveChange) -> Intent
}

extension Screen {
    var isMidFlow: Bool { false }
    var isTyping: Bool { false }
    func action(forClick id: String) -> Action? { nil }
    func reappear() -> Intent { .none }
    func leave() -> Intent { .none }
    func focusSearch() -> Intent { .none }
    func follow(_ change: LiveChange) -> Intent { .none }

    /// The key's intent, or nil when the key is not this screen's (the app's keys apply then).
    func handle(_ key: KeyEvent, context: ScreenContext) -> Intent? {
        keyMap.action(for: key).map { perform($0, context: context) }
    }

    func click(_ id: String, context: ScreenContext) -> Intent {
        action(forClick: id).map { perform($0, context: context) } ?? .none
    }

    var help: [KeyHelp] { keyMap.help }

    /// Whether the screen takes the key (before the app's own keys).
    func takes(_ key: KeyEvent) -> Bool { keyMap.action(for: key) != nil }
}

/// What every screen renders with.
@MainActor
struct RenderContext {
    var theme: Theme
    var model: AppModel
    /// Advances while work runs (spinners).
    var tick: Int
    /// Test mode (simulators, clock) or live.
    var isTestMode: Bool { model.isTestMode }
}

/// The frame of a "working…" indicator, from a counter the app advances while work runs.
enum Spinner {
    static func text(_ tick: Int) -> String { ["\u{25D0}", "\u{25D3}", "\u{25D1}", "\u{25D2}"][tick % 4] }
}

/// Where a click on a region named "prefix.N" points.
func index(of id: String, prefix: String) -> Int? {
    id.hasPrefix(prefix) ? Int(id.dropFirst(prefix.count)) : nil
}
