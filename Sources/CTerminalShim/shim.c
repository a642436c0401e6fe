// Wide-character curses, as in Sources/CNCursesW/shim.h (SwiftPM drops the .pc file's -D flags).
#define _DEFAULT_SOURCE 1
#define _XOPEN_SOURCE 700
#define NCURSES_WIDECHAR 1
#define _XOPEN_SOURCE_EXTENDED 1
#include <locale.h>
#include <signal.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <ncursesw/curses.h>
#include "CTerminalShim.h"

static volatile sig_atomic_t active = 0;

int savedesk_wcwidth(unsigned int scalar) {
    return wcwidth((wchar_t)scalar);
}

void savedesk_screen_size(int *rows, int *cols) {
    int r = 0, c = 0;
    if (stdscr != NULL) {
        getmaxyx(stdscr, r, c);
    }
    *rows = r;
    *cols = c;
}

const char *savedesk_curses_version(void) {
    return curses_version();
}

int savedesk_start(void) {
    setlocale(LC_ALL, "");
    initscr();
    active = 1;
    cbreak();
    noecho();
    nonl();
    intrflush(stdscr, FALSE);
    keypad(stdscr, TRUE);
    nodelay(stdscr, TRUE);
    set_escdelay(25);
    // No typeahead check while drawing: curses would poll stdin and flush before each changed
    // line (a frame in several writes); the frame goes out in one write instead.
    typeahead(-1);
    // Terminals that ignore keypad-transmit mode send CSI arrows, not the terminfo's SS3 ones.
    define_key("\033[A", KEY_UP);
    define_key("\033[B", KEY_DOWN);
    define_key("\033[C", KEY_RIGHT);
    define_key("\033[D", KEY_LEFT);
    define_key("\033[H", KEY_HOME);
    define_key("\033[F", KEY_END);
    mousemask(BUTTON1_CLICKED | BUTTON1_PRESSED, NULL);
    mouseinterval(0);
    curs_set(0);
    // ncurses 6.4 flushes its output after every cursor movement until the screen has been
    // suspended once (its SCREEN starts "initial", and only a refresh after endwin makes it
    // "running"): a frame went out as a write per moved-to place, each waking the terminal. Once
    // through endwin and back (before the first frame, nothing drawn yet), a frame is one write.
    endwin();
    doupdate();
    if (!has_colors()) return 0;
    start_color();
    use_default_colors();
    return COLORS;
}

void savedesk_stop(void) {
    if (!active) return;
    active = 0;
    curs_set(1);
    endwin();
}

int savedesk_active(void) {
    return active;
}

static void restore_and_reraise(int signal_number) {
    savedesk_stop();
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = SIG_DFL;
    sigaction(signal_number, &action, NULL);
    raise(signal_number);
}

void savedesk_install_crash_restore(void) {
    int signals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP};
    for (size_t i = 0; i < sizeof signals / sizeof signals[0]; i++) {
        struct sigaction action;
        memset(&action, 0, sizeof action);
        action.sa_handler = restore_and_reraise;
        sigemptyset(&action.sa_mask);
        sigaction(signals[i], &action, NULL);
    }
}

void savedesk_init_pair(int pair, int fg, int bg) {
    init_pair((short)pair, (short)fg, (short)bg);
}

int savedesk_color_pairs(void) {
    return COLOR_PAIRS;
}

void savedesk_draw(int y, int x, const char *utf8, int length, int flags, int pair) {
    attr_t attrs = A_NORMAL;
    if (flags & SAVEDESK_BOLD) attrs |= A_BOLD;
    if (flags & SAVEDESK_DIM) attrs |= A_DIM;
    if (flags & SAVEDESK_UNDERLINE) attrs |= A_UNDERLINE;
    if (flags & SAVEDESK_REVERSE) attrs |= A_REVERSE;
    if (flags & SAVEDESK_ITALIC) attrs |= A_ITALIC;
    wattr_set(stdscr, attrs, (short)pair, NULL);
    mvwaddnstr(stdscr, y, x, utf8, length);
}

void savedesk_cursor(int visible, int y, int x) {
    if (visible) {
        wmove(stdscr, y, x);
        curs_set(1);
    } else {
        curs_set(0);
    }
}

void savedesk_flush(void) {
    wnoutrefresh(stdscr);
    doupdate();
}

void savedesk_invalidate(void) {
    clearok(curscr, TRUE);
}

void savedesk_resize(int *rows, int *cols) {
    struct winsize size;
    if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_row > 0 && size.ws_col > 0) {
        resizeterm(size.ws_row, size.ws_col);
    }
    savedesk_screen_size(rows, cols);
    clearok(curscr, TRUE);
}

int savedesk_read(unsigned int *scalar, int *code) {
    wint_t value = 0;
    int result = wget_wch(stdscr, &value);
    if (result == ERR) return 0;
    if (result == OK) {
        *scalar = (unsigned int)value;
        return 1;
    }
    switch (value) {
    case KEY_UP: *code = SAVEDESK_KEY_UP; break;
    case KEY_DOWN: *code = SAVEDESK_KEY_DOWN; break;
    case KEY_LEFT: *code = SAVEDESK_KEY_LEFT; break;
    case KEY_RIGHT: *code = SAVEDESK_KEY_RIGHT; break;
    case KEY_ENTER: *code = SAVEDESK_KEY_ENTER; break;
    case KEY_BACKSPACE: *code = SAVEDESK_KEY_BACKSPACE; break;
    case KEY_DC: *code = SAVEDESK_KEY_DELETE; break;
    case KEY_HOME: *code = SAVEDESK_KEY_HOME; break;
    case KEY_END: *code = SAVEDESK_KEY_END; break;
    case KEY_PPAGE: *code = SAVEDESK_KEY_PAGE_UP; break;
    case KEY_NPAGE: *code = SAVEDESK_KEY_PAGE_DOWN; break;
    case KEY_BTAB: *code = SAVEDESK_KEY_BACK_TAB; break;
    case KEY_RESIZE: *code = SAVEDESK_KEY_RESIZE; break;
    case KEY_MOUSE: *code = SAVEDESK_KEY_MOUSE; break;
    default:
        if (value >= KEY_F(1) && value <= KEY_F(24)) {
            *code = SAVEDESK_KEY_FUNCTION + (int)(value - KEY_F0);
        } else {
            *code = SAVEDESK_KEY_NONE;
        }
    }
    return 2;
}

int savedesk_mouse(int *y, int *x) {
    MEVENT event;
    if (getmouse(&event) != OK) return 0;
    *y = event.y;
    *x = event.x;
    return (event.bstate & (BUTTON1_CLICKED | BUTTON1_PRESSED)) ? 1 : 0;
}
