import Foundation
import TOMLKit

/// Named styles for every part of the UI, loaded from TOML (`themes/*.toml`):
///
/// ```toml
/// name = "Default"
/// [roles.accent]
/// fg = "cyan"        # a name, "bright_cyan", 0–255, "#rrggbb" or "default"
/// bold = true        # also dim, underline, reverse, italic; bg as fg
/// ```
///
/// A role the file leaves out keeps the default theme's style.
public struct Theme: Hashable, Sendable {
    public enum Role: String, CaseIterable, Hashable, Sendable {
        case text, muted, title, accent, border, selection, button, buttonFocused = "button_focused", input
        case success, warning, danger, badgeAppStore = "badge_app_store", badgeWeb = "badge_web"
        case statusBar = "status_bar", statusTest = "status_test", statusLive = "status_live"
        case toastInfo = "toast_info", toastError = "toast_error", chartBar = "chart_bar", modal
        /// The "▸" marking a list's selected row. Plain by default: a move then writes the two
        /// cells and the cursor moves (10–13 bytes at 80×24). Any style costs its set and reset on
        /// every move: curses turns an attribute on with sgr and off with sgr0 (15 bytes), a colour
        /// with setaf/setab and off with op and sgr0 (19–24 bytes).
        case marker
    }

    public var name: String
    public private(set) var styles: [Role: Style]

    public subscript(role: Role) -> Style { styles[role] ?? .plain }

    public init(name: String, styles: [Role: Style]) {
        self.name = name
        self.styles = styles
    }

    /// A problem with a theme file, naming the key.
    public struct LoadError: Error, Hashable, Sendable, CustomStringConvertible {
        public var file: String
        public var key: String
        public var message: String
        public var description: String { "\(file): \(key): \(message)" }
    }

    /// Reads a theme; every role it leaves out keeps the default theme's style.
    public static func load(file: String) throws(LoadError) -> Theme {
        guard let text = try? String(contentsOfFile: file, encoding: .utf8) else {
            throw LoadError(file: file, key: "", message: "cannot read the file")
        }
        return try parse(text, file: file)
    }

    public static func parse(_ text: String, file: String = "theme") throws(LoadError) -> Theme {
        let table: TOMLTable
        do { table = try TOMLTable(string: text) } catch {
            throw LoadError(file: file, key: "", message: "not valid TOML (\(error))")
        }
        var theme = Theme.builtInDefault
        for (key, value) in table {
            switch key {
            case "name":
                guard let name = value.string else { throw LoadError(file: file, key: "name", message: "must be text") }
                theme.name = name
            case "roles":
                guard let roles = value.table else { throw LoadError(file: file, key: "roles", message: "must be a table of [roles.NAME]") }
                for (roleName, entry) in roles {
                    guard let role = Role(rawValue: roleName) else {
                        throw LoadError(file: file, key: "roles.\(roleName)",
                                        message: "unknown role (roles: \(Role.allCases.map(\.rawValue).joined(separator: ", ")))")
                    }
                    guard let fields = entry.table else { throw LoadError(file: file, key: "roles.\(roleName)", message: "must be a table") }
                    theme.styles[role] = try style(fields, path: "roles.\(roleName)", file: file)
                }
            default:
                throw LoadError(file: file, key: key, message: "unknown key (a theme has name and [roles.NAME])")
            }
        }
        return theme
    }

    static func style(_ fields: TOMLTable, path: String, file: String) throws(LoadError) -> Style {
        var style = Style()
        let flags: [String: Attributes] = ["bold": .bold, "dim": .dim, "underline": .underline, "reverse": .reverse, "italic": .italic]
        for (key, value) in fields {
            switch key {
            case "fg", "bg":
                guard let color = color(value) else {
                    throw LoadError(file: file, key: "\(path).\(key)",
                                    message: "not a colour (a name like \"cyan\" or \"bright_red\", 0–255, \"#rrggbb\" or \"default\")")
                }
                if key == "fg" { style.foreground = color } else { style.background = color }
            default:
                guard let flag = flags[key] else {
                    throw LoadError(file: file, key: "\(path).\(key)", message: "unknown key (fg, bg, bold, dim, underline, reverse, italic)")
                }
                guard let on = value.bool else { throw LoadError(file: file, key: "\(path).\(key)", message: "must be true or false") }
                if on { style.attributes.insert(flag) }
            }
        }
        return style
    }

    static let colorNames = ["black", "red", "green", "yellow", "blue", "magenta", "cyan", "white"]

    static func color(_ value: TOMLValueConvertible) -> Color? {
        if let index = value.int { return (0...255).contains(index) ? .indexed(UInt8(index)) : nil }
        guard let text = value.string?.lowercased() else { return nil }
        if text == "default" { return .default }
        if let index = colorNames.firstIndex(of: text) { return .indexed(UInt8(index)) }
        if text.hasPrefix("bright_"), let index = colorNames.firstIndex(of: String(text.dropFirst(7))) { return .indexed(UInt8(index + 8)) }
        if text.hasPrefix("#"), text.count == 7, let rgb = UInt32(text.dropFirst(), radix: 16) {
            return .rgb(UInt8(rgb >> 16), UInt8((rgb >> 8) & 0xFF), UInt8(rgb & 0xFF))
        }
        return nil
    }

    /// The same theme without colours (NO_COLOR, or a terminal without colour): attributes only,
    /// with reverse video where a colour carried the meaning (selection, buttons, status bar).
    public var withoutColor: Theme {
        var copy = self
        for (role, style) in styles {
            var plain = Style(attributes: style.attributes)
            if style.background != .default { plain.attributes.insert(.reverse) }
            copy.styles[role] = plain
        }
        copy.name = name + " (no colour)"
        return copy
    }

    /// The default theme, also shipped as `themes/default.toml` (a test keeps the two equal).
    public static let builtInDefault = Theme(name: "Default", styles: [
        .text: Style(),
        .muted: Style(foreground: .indexed(8)),
        .title: Style(attributes: [.bold]),
        .accent: Style(foreground: .cyan, attributes: [.bold]),
        .border: Style(foreground: .indexed(8)),
        .selection: Style(foreground: .black, background: .cyan),
        .button: Style(foreground: .cyan),
        .buttonFocused: Style(foreground: .black, background: .cyan),
        .input: Style(attributes: [.underline]),
        .success: Style(foreground: .green),
        .warning: Style(foreground: .yellow),
        .danger: Style(foreground: .indexed(9), attributes: [.bold]),
        .badgeAppStore: Style(foreground: .indexed(15), background: .blue),
        .badgeWeb: Style(foreground: .black, background: .green),
        .statusBar: Style(foreground: .white, background: .indexed(236)),
        .statusTest: Style(foreground: .black, background: .yellow),
        .statusLive: Style(foreground: .indexed(15), background: .red, attributes: [.bold]),
        .toastInfo: Style(foreground: .black, background: .cyan),
        .toastError: Style(foreground: .indexed(15), background: .red),
        .chartBar: Style(foreground: .cyan),
        .modal: Style(),
        .marker: Style(),
    ])
}
