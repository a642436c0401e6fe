import TerminalKit

/// The keys every screen shares, as key maps: the help overlay lists them after the screen's own.
enum AppKeys {
    enum Action: Hashable {
        case help, quit, back, search, retry, dismissToast, analytics, demoDevice
    }

    /// Taken before the screen's keys (unless a text field has them).
    static var first: KeyMap<Action> {
        KeyMap([
            .on(.character("?"), keys: "?", "this help", .help),
            .on(.character("q"), .control("c"), keys: "q", "quit", .quit),
        ])
    }

    /// Taken when the screen does not take the key.
    static func then(isTestMode: Bool) -> KeyMap<Action> {
        var map = KeyMap<Action>([
            .on(.escape, .backspace, keys: "Esc Backspace", "back", .back),
            .on(.character("/"), keys: "/", "search customers", .search),
            .on(.character("r"), keys: "r", "retry", .retry),
            .on(.character("x"), keys: "x", "dismiss the message", .dismissToast),
            .on(.character("a"), keys: "a", "analytics", .analytics),
        ])
        if isTestMode { map.append(.on(.character("d"), keys: "d", "demo device", .demoDevice)) }
        return map
    }

    /// Whether the app has a use for the key (a screen that types on any letter leaves these).
    static func isAppKey(_ key: KeyEvent) -> Bool {
        first.action(for: key) != nil || then(isTestMode: true).action(for: key) != nil
    }
}
