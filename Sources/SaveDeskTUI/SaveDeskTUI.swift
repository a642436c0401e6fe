import SaveDeskViewModels
import TerminalKit
import TerminalKitNCurses

/// SaveDeskTUI: screens, key maps and the app loop. Filled by the TUI issue.
public enum SaveDeskTUIModule {}
