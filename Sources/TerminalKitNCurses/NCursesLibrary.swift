import CNCursesW
import CTerminalShim
import TerminalKit

/// Facts about the linked ncursesw library. The curses backend itself arrives with the TUI issue;
/// this file proves the system library and the C shim build and link.
public enum NCursesLibrary {
    /// The version string ncursesw reports, e.g. "ncurses 6.4.20221231".
    public static var version: String { String(cString: savedesk_curses_version()) }
}
