import Foundation
import SaveDeskViewModels
import TerminalKit

/// One screen of the console. `render` is a pure function of the screen's view model and its own
/// small UI state (focus, the text being typed); keys and clicks become view-model calls.
@MainActor
protocol Screen: AnyObject {
    var title: String { get }
    /// The keys of this screen, for the help overlay (`?`).
    var keys: [KeyHelp] { get }
    /// Leaving now would end something half-done (quitting asks first).
    var isMidFlow: Bool { get }
    /// A text field has the keys: printable keys (q, ?, /) type into it.
    var isTyping: Bool { get }
    func render(into frame: inout Frame, area: Rect, context: RenderContext)
    /// Returns false when the key is not this screen's (the app's keys apply then).
    func handle(_ key: KeyEvent, app: TUIApp) -> Bool
    /// A click on a region the screen named while rendering.
    func click(_ id: String, app: TUIApp)
    /// The screen is shown for the first time (load what it needs).
    func appear(app: TUIApp)
    /// The screen is being closed for good (back, or quit).
    func leave(app: TUIApp)
}

extension Screen {
    var isMidFlow: Bool { false }
    var isTyping: Bool { false }
    func click(_ id: String, app: TUIApp) {}
    func leave(app: TUIApp) {}
}

/// A key and what it does, as the help overlay lists it.
struct KeyHelp: Hashable, Sendable {
    var keys: String
    var action: String

    init(_ keys: String, _ action: String) {
        self.keys = keys
        self.action = action
    }
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
