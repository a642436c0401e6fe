#ifndef SAVEDESK_CTERMINALSHIM_H
#define SAVEDESK_CTERMINALSHIM_H
// Accessors for the parts of curses that do not import into Swift: function-like macros
// (getmaxyx, A_*, KEY_F) and global mutable state (stdscr, LINES, COLS), which Swift 6 treats
// as shared mutable state. Only TerminalKitNCurses uses this target.
#include <stddef.h>
#include <wchar.h>

/// The display width of one Unicode scalar (wcwidth), -1 for non-printable.
int savedesk_wcwidth(unsigned int scalar);
/// The size of the standard screen, through getmaxyx on stdscr.
void savedesk_screen_size(int *rows, int *cols);
/// The ncurses version string.
const char *savedesk_curses_version(void);
#endif
