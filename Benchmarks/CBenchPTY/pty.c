#define _GNU_SOURCE 1
#include <fcntl.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include "CBenchPTY.h"

int savedesk_bench_openpty(int rows, int cols, char *slave_path, int path_size) {
    int master = posix_openpt(O_RDWR | O_NOCTTY);
    if (master < 0 || grantpt(master) != 0 || unlockpt(master) != 0) return -1;
    if (ptsname_r(master, slave_path, (size_t)path_size) != 0) return -1;
    struct winsize size = {0};
    size.ws_row = (unsigned short)rows;
    size.ws_col = (unsigned short)cols;
    ioctl(master, TIOCSWINSZ, &size);
    return master;
}

short savedesk_bench_spawn_setsid(void) {
    return POSIX_SPAWN_SETSID;
}
