#ifndef SAVEDESK_CNCURSESW_SHIM_H
#define SAVEDESK_CNCURSESW_SHIM_H
// SwiftPM drops the -D flags of ncursesw.pc, so wide-character support is switched on here,
// before curses.h is read.
#ifndef NCURSES_WIDECHAR
#define NCURSES_WIDECHAR 1
#endif
#ifndef _XOPEN_SOURCE_EXTENDED
#define _XOPEN_SOURCE_EXTENDED 1
#endif
#include <locale.h>
#include <wchar.h>
#include <ncursesw/curses.h>
#endif
