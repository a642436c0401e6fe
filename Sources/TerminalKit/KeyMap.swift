/// A key and what it does, as a help overlay lists it.
public struct KeyHelp: Hashable, Sendable {
    public var keys: String
    public var action: String

    public init(_ keys: String, _ action: String) {
        self.keys = keys
        self.action = action
    }
}

/// The keys that apply now and what each does. One value drives both the handling of a key
/// (`action(for:)`) and the help (`help`), so they cannot disagree. Build it from the state of
/// the moment: a key that does not apply now is simply not in it.
public struct KeyMap<Action> {
    public struct Binding {
        /// As the help shows the keys ("↑↓ j k", "1–9", "type").
        public var keys: String
        /// What they do; empty: not listed in the help (an alias of a listed binding).
        public var help: String
        let action: (KeyEvent) -> Action?
        /// The keys themselves, when the binding lists them (`on`).
        var events: [KeyEvent] = []

        /// Any key the closure gives an action for (typing into a field, a key with a payload).
        public init(_ keys: String, _ help: String, matching action: @escaping (KeyEvent) -> Action?) {
            self.keys = keys
            self.help = help
            self.action = action
        }

        /// Any key the closure gives an action for.
        public static func matching(_ keys: String, _ help: String, _ action: @escaping (KeyEvent) -> Action?) -> Binding {
            Binding(keys, help, matching: action)
        }

        /// These keys, one action.
        public static func on(_ events: KeyEvent..., keys: String, _ help: String, _ action: Action) -> Binding {
            var binding = Binding(keys, help) { events.contains($0) ? action : nil }
            binding.events = events
            return binding
        }

        /// ↑ and ↓ (and k and j, as in vi).
        public static func upDown(_ help: String, up: Action, down: Action) -> Binding {
            Binding("\u{2191}\u{2193} j k", help) { key in
                switch key {
                case .up, .character("k"): up
                case .down, .character("j"): down
                default: nil
                }
            }
        }

        /// Number keys 1–9, with the 0-based index of the one pressed, while `count` are on screen.
        public static func digits(count: Int, _ help: String, _ action: @escaping (Int) -> Action) -> Binding {
            Binding("1\u{2013}9", help) { key in
                guard let digit = key.digit, digit >= 1, digit <= min(9, count) else { return nil }
                return action(digit - 1)
            }
        }
    }

    public private(set) var bindings: [Binding]

    public init(_ bindings: [Binding] = []) { self.bindings = bindings }

    /// The action of the first binding that takes the key.
    public func action(for key: KeyEvent) -> Action? {
        for binding in bindings { if let action = binding.action(key) { return action } }
        return nil
    }

    /// What the help overlay lists: each listed binding, in order.
    public var help: [KeyHelp] { bindings.filter { !$0.help.isEmpty }.map { KeyHelp($0.keys, $0.help) } }

    /// The help of the bindings whose keys are not all taken first by `taken` (the screen's keys
    /// come before the app's: an app key the screen takes never reaches the app, so the help does
    /// not list it twice).
    public func help(notTakenBy taken: (KeyEvent) -> Bool) -> [KeyHelp] {
        bindings.filter { !$0.help.isEmpty && ($0.events.isEmpty || !$0.events.allSatisfy(taken)) }.map { KeyHelp($0.keys, $0.help) }
    }

    public mutating func append(_ binding: Binding) { bindings.append(binding) }

    public static func + (lhs: KeyMap, rhs: KeyMap) -> KeyMap { KeyMap(lhs.bindings + rhs.bindings) }
}
