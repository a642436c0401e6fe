// Wide-character curses, as in Sources/CNCursesW/shim.h (SwiftPM drops the .pc file's -D flags).
#define _DEFAULT_SOURCE 1
#define _XOPEN_SOURCE 700
#define NCURSES_WIDECHAR 1
#define _XOPEN_SOURCE_EXTENDED 1
#include <ncursesw/curses.h>
#include "CTerminalShim.h"

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
