/// TerminalKit: pure terminal rendering (cells, buffers, widgets, diff, themes), no curses.
/// Filled by the TUI issue; nothing here yet.
public enum TerminalKitModule {}
