import Foundation
import SaveDeskThemes
import TerminalKit

/// `--theme NAME|PATH`: a bundled theme by name, or a file. A theme that cannot be used gives the
/// default theme and a message naming the problem (the bad key of a bad file).
public enum ThemeChoice {
    public static func resolve(_ argument: String?, environment: [String: String] = ProcessInfo.processInfo.environment) -> (theme: Theme, problem: String?) {
        var (theme, problem) = load(argument ?? environment["SAVEDESK_THEME"])
        // NO_COLOR (any non-empty value) keeps the layout and drops the colours.
        if let value = environment["NO_COLOR"], !value.isEmpty { theme = theme.withoutColor }
        return (theme, problem)
    }

    static func load(_ argument: String?) -> (Theme, String?) {
        guard let argument, !argument.isEmpty else { return (.builtInDefault, nil) }
        let file: String
        if let bundled = BundledThemes.url(named: argument) {
            file = bundled.path
        } else if FileManager.default.fileExists(atPath: argument) {
            file = argument
        } else {
            return (.builtInDefault, "theme \"\(argument)\" is neither a bundled theme (\(BundledThemes.names.joined(separator: ", "))) nor a file; using the default theme")
        }
        do {
            return (try Theme.load(file: file), nil)
        } catch {
            return (.builtInDefault, "\(error.description); using the default theme")
        }
    }
}
