#ifndef SAVEDESK_CTERMINALSHIM_H
#define SAVEDESK_CTERMINALSHIM_H
// The parts of curses that do not import into Swift: function-like macros (getmaxyx, A_*,
// COLOR_PAIR, KEY_F), global mutable state (stdscr, LINES, COLS, COLORS), which Swift 6 treats
// as shared mutable state, and the wide-character calls. Only TerminalKitNCurses uses this target;
// every function here is called on the main thread.
#include <stddef.h>
#include <wchar.h>

/// The display width of one Unicode scalar (wcwidth), -1 for non-printable.
int savedesk_wcwidth(unsigned int scalar);
/// The size of the standard screen, through getmaxyx on stdscr.
void savedesk_screen_size(int *rows, int *cols);
/// The ncurses version string.
const char *savedesk_curses_version(void);

/// Starts curses on the terminal: locale, cbreak (Ctrl-C still raises SIGINT), no echo, keypad,
/// non-blocking reads, Esc after 25 ms, mouse clicks, hidden cursor, default colours. Returns the
/// number of colours (0 when the terminal has none).
int savedesk_start(void);
/// Ends curses and restores the terminal; safe to call more than once and from a signal handler
/// path (it only runs once).
void savedesk_stop(void);
/// 1 while curses owns the terminal.
int savedesk_active(void);
/// Restores the terminal on a crash (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP), then
/// lets the signal do what it would have done.
void savedesk_install_crash_restore(void);

/// Defines colour pair `pair` (fg/bg: -1 for the terminal's default).
void savedesk_init_pair(int pair, int fg, int bg);
/// How many colour pairs the terminal has.
int savedesk_color_pairs(void);

enum {
    SAVEDESK_BOLD = 1, SAVEDESK_DIM = 2, SAVEDESK_UNDERLINE = 4, SAVEDESK_REVERSE = 8, SAVEDESK_ITALIC = 16
};
/// Draws UTF-8 text at (y, x) with attributes (SAVEDESK_* flags) and a colour pair.
void savedesk_draw(int y, int x, const char *utf8, int length, int flags, int pair);
/// Shows the cursor at (y, x), or hides it when visible is 0.
void savedesk_cursor(int visible, int y, int x);
/// Sends everything drawn since the last flush to the terminal.
void savedesk_flush(void);
/// The next frame is drawn in full (after a resize or when the screen may be damaged).
void savedesk_invalidate(void);
/// Reads the terminal's size from the kernel and resizes curses to it.
void savedesk_resize(int *rows, int *cols);

enum {
    SAVEDESK_KEY_NONE = 0, SAVEDESK_KEY_UP, SAVEDESK_KEY_DOWN, SAVEDESK_KEY_LEFT, SAVEDESK_KEY_RIGHT, SAVEDESK_KEY_ENTER,
    SAVEDESK_KEY_BACKSPACE, SAVEDESK_KEY_DELETE, SAVEDESK_KEY_HOME, SAVEDESK_KEY_END, SAVEDESK_KEY_PAGE_UP,
    SAVEDESK_KEY_PAGE_DOWN, SAVEDESK_KEY_BACK_TAB, SAVEDESK_KEY_RESIZE, SAVEDESK_KEY_MOUSE, SAVEDESK_KEY_FUNCTION = 100
};
/// Reads one key without blocking. Returns 0 when there is none, 1 for a character (in *scalar),
/// 2 for a key code (mapped to SAVEDESK_KEY_*, function keys as SAVEDESK_KEY_FUNCTION + n, in *code).
int savedesk_read(unsigned int *scalar, int *code);
/// The last mouse event: 1 when it is a left click/press, with its cell.
int savedesk_mouse(int *y, int *x);

/// Linux: runs the main thread's loop for good (it never returns): serves the main dispatch queue
/// and calls the handler `savedesk_main_loop_watch` set, on this thread, when its descriptor is
/// readable. The console's `main` runs it instead of Foundation's run loop.
void savedesk_main_loop(void);
/// 1 once `savedesk_main_loop` runs.
int savedesk_main_loop_running(void);
/// Calls `handler` from the main loop whenever `fd` is readable (a NULL handler stops it).
void savedesk_main_loop_watch(int fd, void (*handler)(void));
#endif
